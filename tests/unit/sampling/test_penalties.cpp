#include <catch2/catch.hpp>

#include <cmath>

#include "radiance/sampling/sampler.h"

using namespace radiance::sampling;
using Catch::Matchers::WithinAbs;

namespace {

// The adjusted logits, read back through the logprobs of every token (they differ from the
// adjusted logits by one constant, which we remove by anchoring token `anchor`).
std::vector<double> adjusted(const std::vector<float>& logits, SamplingParams p, const TokenHistory& h, size_t anchor, float anchor_value) {
    p.top_logprobs = static_cast<int32_t>(logits.size());
    p.temperature = 0;
    auto r = sample(logits, p, h, 0);
    std::vector<double> lp(logits.size());
    for (auto& t : r.top) lp[static_cast<size_t>(t.token)] = t.logprob;
    const double shift = anchor_value - lp[anchor];
    for (auto& v : lp) v += shift;
    return lp;
}

}  // namespace

TEST_CASE("sampling penalties: repetition divides positive and multiplies negative logits", "[sampling]") {
    std::vector<float> logits{2.0f, -2.0f, 1.0f, 0.5f};
    std::vector<int32_t> prompt{0}, generated{1, 1};
    SamplingParams p;
    p.repetition_penalty = 2.0f;
    auto x = adjusted(logits, p, {prompt, generated}, 3, 0.5f);
    CHECK_THAT(x[0], WithinAbs(1.0, 1e-5));   // seen in the prompt
    CHECK_THAT(x[1], WithinAbs(-4.0, 1e-5));  // seen twice: penalised once
    CHECK_THAT(x[2], WithinAbs(1.0, 1e-5));
}

TEST_CASE("sampling penalties: presence and frequency count generated tokens only", "[sampling]") {
    std::vector<float> logits{1.0f, 1.0f, 1.0f, 1.0f};
    std::vector<int32_t> prompt{0, 0, 0}, generated{2, 2, 3};
    SamplingParams p;
    p.presence_penalty = 0.5f;
    p.frequency_penalty = 0.25f;
    auto x = adjusted(logits, p, {prompt, generated}, 1, 1.0f);
    CHECK_THAT(x[0], WithinAbs(1.0, 1e-5));
    CHECK_THAT(x[2], WithinAbs(1.0 - 0.5 - 0.5, 1e-5));
    CHECK_THAT(x[3], WithinAbs(1.0 - 0.5 - 0.25, 1e-5));
    p.presence_penalty = -1.0f;  // negative values encourage repeats
    p.frequency_penalty = 0;
    x = adjusted(logits, p, {prompt, generated}, 1, 1.0f);
    CHECK_THAT(x[2], WithinAbs(2.0, 1e-5));
}

TEST_CASE("sampling penalties: logit_bias comes first, out-of-vocabulary ids are ignored", "[sampling]") {
    std::vector<float> logits{1.0f, 0.0f, 0.0f};
    std::vector<int32_t> generated{0};
    SamplingParams p;
    p.logit_bias = {{0, 1.0f}, {7, 50.0f}, {-1, 50.0f}};
    p.repetition_penalty = 2.0f;
    auto x = adjusted(logits, p, {{}, generated}, 1, 0.0f);
    CHECK_THAT(x[0], WithinAbs(1.0, 1e-5));  // (1 + 1) / 2, not 1 / 2 + 1
}

TEST_CASE("sampling penalties: bias of +-100 forces or bans a token", "[sampling]") {
    std::vector<float> logits{3.0f, 0.0f, 1.0f};
    SamplingParams p;
    p.logit_bias = {{1, 100.0f}};
    for (uint64_t pos = 0; pos < 20; ++pos) CHECK(sample(logits, p, {}, pos).token == 1);
    p.logit_bias = {{0, -100.0f}};
    p.temperature = 0;
    CHECK(sample(logits, p, {}, 0).token == 2);
}

TEST_CASE("sampling penalties steer greedy decoding away from repeats", "[sampling]") {
    std::vector<float> logits{2.0f, 1.9f, 0.0f};
    std::vector<int32_t> generated{0};
    SamplingParams p;
    p.temperature = 0;
    CHECK(sample(logits, p, {{}, generated}, 0).token == 0);
    p.frequency_penalty = 0.2f;
    CHECK(sample(logits, p, {{}, generated}, 0).token == 1);
}
