// The ids that end a generation: the checkpoint's generation_config.json eos ids (rad-convert's
// gen.eos_token_ids) beside the tokenizer's EOS and the template's eos_token, as transformers'
// generate() and vLLM stop on all of them; ignore_eos drops them all. Mutation seen failing:
// the model's ids replacing the tokenizer's instead of joining them (the union check).
#include <catch2/catch.hpp>

#include <algorithm>

#include "api_test_util.h"

using namespace api_test;

namespace {

std::vector<int32_t> sorted(std::vector<int32_t> v) {
    std::sort(v.begin(), v.end());
    return v;
}

}  // namespace

TEST_CASE("api stop tokens: the model's end ids join the tokenizer's EOS and the template's eos_token", "[api]") {
    const auto& tok = qwen3_tokenizer();
    const int32_t im_end = *tok.token_to_id("<|im_end|>"), endoftext = *tok.token_to_id("<|endoftext|>");
    ApiServer s(ApiServer::default_settings(), {}, tok, [&](ApiContext& c) { c.stop_token_ids = {endoftext, 4242}; });
    REQUIRE(s.post("/v1/chat/completions", json{{"model", "fake-model"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}}).status == 200);
    REQUIRE(s.post("/v1/completions", json{{"model", "fake-model"}, {"prompt", "Hi"}, {"ignore_eos", true}}).status == 200);
    const auto seen = s.service.submitted();
    REQUIRE(seen.size() == 2);
    std::vector<int32_t> want = {endoftext, 4242, im_end};
    if (auto eos = tok.eos_id()) want.push_back(*eos);
    want = sorted(want);
    want.erase(std::unique(want.begin(), want.end()), want.end());
    CHECK(sorted(seen[0].stop_token_ids) == want);
    CHECK(seen[1].stop_token_ids.empty());
}
