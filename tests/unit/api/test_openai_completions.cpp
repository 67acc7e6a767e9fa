#include <catch2/catch.hpp>

#include "api_test_util.h"

using namespace api_test;

namespace {

const std::string kScript = "Hello world! How are you today?";

std::string stream_text(const std::string& body, int index = 0) {
    std::string text;
    for (const auto& ev : parse_sse(body)) {
        if (ev.data == "[DONE]") continue;
        const json chunk = json::parse(ev.data);
        for (const auto& c : chunk["choices"])
            if (c["index"] == index) text += c["text"].get<std::string>();
    }
    return text;
}

}  // namespace

TEST_CASE("api completions: a text prompt", "[api]") {
    ApiServer s;
    Answer a = s.post("/v1/completions", json{{"model", "fake-model"}, {"prompt", "Say hi"}});
    REQUIRE(a.status == 200);
    json j = a.json_body();
    CHECK(j["object"] == "text_completion");
    CHECK(j["choices"][0]["text"] == kScript);
    CHECK(j["choices"][0]["finish_reason"] == "stop");
    const auto req = s.service.submitted().back();
    CHECK(req.prompt == qwen3_tokenizer().encode("Say hi", true));
    CHECK(j["usage"]["prompt_tokens"] == req.prompt.size());
}

TEST_CASE("api completions: token id prompts go through as they are", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/completions", json{{"prompt", {1, 2, 3}}}).status == 200);
    CHECK(s.service.submitted().back().prompt == std::vector<int32_t>{1, 2, 3});
}

TEST_CASE("api completions: echo and return_token_ids", "[api]") {
    ApiServer s;
    json j = s.post("/v1/completions", json{{"prompt", "Say hi"}, {"echo", true}, {"return_token_ids", true}}).json_body();
    CHECK(j["choices"][0]["text"] == "Say hi" + kScript);
    CHECK(j["choices"][0]["token_ids"] == encode(kScript));
    CHECK(j["choices"][0]["prompt_token_ids"] == qwen3_tokenizer().encode("Say hi", true));
    CHECK(j["prompt_token_ids"] == qwen3_tokenizer().encode("Say hi", true));

    Answer st = s.post("/v1/completions", json{{"prompt", "Say hi"}, {"echo", true}, {"stream", true}});
    INFO(st.body);
    CHECK(stream_text(st.body) == "Say hi" + kScript);
}

TEST_CASE("api completions: a batch of prompts times n", "[api]") {
    ApiServer s;
    json j = s.post("/v1/completions", json{{"prompt", {"one", "two"}}, {"n", 2}, {"max_tokens", 2}}).json_body();
    REQUIRE(j["choices"].size() == 4);
    auto sub = s.service.submitted();
    REQUIRE(sub.size() == 4);
    CHECK(sub[0].prompt == sub[1].prompt);
    CHECK(sub[2].prompt == qwen3_tokenizer().encode("two", true));
    for (int i = 0; i < 4; ++i) CHECK(j["choices"][i]["index"] == i);
    CHECK(j["usage"]["prompt_tokens"] == sub[0].prompt.size() + sub[2].prompt.size());
    CHECK(j["usage"]["completion_tokens"] == 8);

    json ids = s.post("/v1/completions", json{{"prompt", {{1, 2}, {3}}}}).json_body();
    CHECK(ids["choices"].size() == 2);
}

TEST_CASE("api completions: cache_salt reaches every choice of every prompt", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/completions", json{{"prompt", {"one", "two"}}, {"n", 2}, {"cache_salt", "tenant-7"}}).status == 200);
    auto sub = s.service.submitted();
    REQUIRE(sub.size() == 4);
    for (const auto& r : sub) CHECK(r.cache_salt == "tenant-7");
}

TEST_CASE("api completions: streaming equals the single answer", "[api]") {
    ApiServer s;
    for (json stop : {json(nullptr), json("are y")}) {
        json body = {{"prompt", "Say hi"}, {"stop", stop}};
        const std::string whole = s.post("/v1/completions", body).json_body()["choices"][0]["text"];
        body["stream"] = true;
        body["stream_options"] = {{"include_usage", true}};
        Answer st = s.post("/v1/completions", body);
        auto events = parse_sse(st.body);
        REQUIRE(events.size() >= 3);
        CHECK(events.back().data == "[DONE]");
        CHECK(json::parse(events[events.size() - 2].data)["usage"]["total_tokens"].get<int>() > 0);
        CHECK(stream_text(st.body) == whole);
    }
    CHECK(s.post("/v1/completions", json{{"prompt", "x"}, {"stop", "are y"}}).json_body()["choices"][0]["text"] == "Hello world! How ");
}

TEST_CASE("api completions: logprobs in the completions shape", "[api]") {
    ApiServer s;
    json lp = s.post("/v1/completions", json{{"prompt", "x"}, {"logprobs", 2}}).json_body()["choices"][0]["logprobs"];
    const auto ids = encode(kScript);
    REQUIRE(lp["tokens"].size() == ids.size());
    CHECK(lp["token_logprobs"].size() == ids.size());
    CHECK(lp["top_logprobs"][0].size() == 2);
    CHECK(lp["text_offset"][0] == 0);
    CHECK(lp["text_offset"][1] == lp["tokens"][0].get<std::string>().size());
    CHECK(s.service.submitted().back().sampling.top_logprobs == 2);
}

TEST_CASE("api completions: prompt errors", "[api]") {
    ApiServer s;
    CHECK(s.post("/v1/completions", json{{"model", "fake-model"}}).json_body()["error"]["param"] == "prompt");
    CHECK(s.post("/v1/completions", json{{"prompt", {-1}}}).json_body()["error"]["param"] == "prompt");
    CHECK(s.post("/v1/completions", json{{"prompt", {999999999}}}).status == 400);
    CHECK(s.post("/v1/completions", json{{"prompt", json::array()}}).status == 400);
    CHECK(s.post("/v1/completions", json{{"prompt", {1, "a"}}}).status == 400);
    CHECK(s.post("/v1/completions", json{{"prompt", "x"}, {"echo", true}, {"logprobs", 1}}).json_body()["error"]["param"] == "echo");
}

// A stop string ends the generation as finished, not aborted: the service is told Stop, which is
// what radiance:request_success_total counts (it said "abort"). Mutation run: Job::on_tokens
// cancelling without a reason (Cancelled) fails it.
TEST_CASE("api completions: a stop string cancels the generation as a stop", "[api]") {
    // A script far longer than the stop string's place, a few ms a call: the generation cannot end
    // by itself before the job cancels it, even when the job learns the request's id only after
    // the first tokens came (a loaded machine; it ended by EOS there with the 8-token script).
    FakeGenerationService::Settings set;
    for (int i = 0; i < 100; ++i) {
        const auto ids = encode(kScript + " ");
        set.script.insert(set.script.end(), ids.begin(), ids.end());
    }
    set.tick = std::chrono::milliseconds(2);
    ApiServer s(set);
    Answer a = s.post("/v1/completions", json{{"model", "fake-model"}, {"prompt", "Hi"}, {"max_tokens", 2000}, {"stop", "world"}});
    REQUIRE(a.status == 200);
    CHECK(a.json_body()["choices"][0]["finish_reason"] == "stop");
    REQUIRE(s.service.cancel_reasons().size() == 1);
    CHECK(s.service.cancel_reasons()[0] == radiance::frontend::FinishReason::Stop);
}
