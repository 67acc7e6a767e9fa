#include <catch2/catch.hpp>

#include <cmath>

#include "sampling_test_util.h"

using namespace radiance::sampling;
using Catch::Matchers::WithinAbs;

TEST_CASE("sampling logprobs: log-softmax of the row, most likely first", "[sampling]") {
    std::vector<float> logits{1.0f, 3.0f, 0.0f, 3.0f, -2.0f};
    SamplingParams p;
    p.top_logprobs = 3;
    p.temperature = 0;
    auto r = sample(logits, p, {}, 0);
    auto expected = sampling_test::softmax(logits);
    REQUIRE(r.token == 1);
    CHECK_THAT(r.logprob, WithinAbs(std::log(expected[1]), 1e-6));
    REQUIRE(r.top.size() == 3);
    CHECK(r.top[0].token == 1);  // tie with 3: lower id first
    CHECK(r.top[1].token == 3);
    CHECK(r.top[2].token == 0);
    for (auto& t : r.top) CHECK_THAT(t.logprob, WithinAbs(std::log(expected[static_cast<size_t>(t.token)]), 1e-6));
}

TEST_CASE("sampling logprobs: temperature shapes them, greedy does not", "[sampling]") {
    std::vector<float> logits{1.0f, 2.0f, 0.0f};
    SamplingParams p;
    p.top_logprobs = 0;
    p.temperature = 0.5f;
    auto r = sample(logits, p, {}, 4);
    CHECK(r.top.empty());
    CHECK_THAT(r.logprob, WithinAbs(std::log(sampling_test::softmax(logits, 0.5)[static_cast<size_t>(r.token)]), 1e-6));
    p.temperature = 0;
    r = sample(logits, p, {}, 4);
    CHECK_THAT(r.logprob, WithinAbs(std::log(sampling_test::softmax(logits)[1]), 1e-6));
}

TEST_CASE("sampling logprobs: describe the distribution before truncation", "[sampling]") {
    std::vector<float> logits{1.0f, 2.0f, 0.0f};
    SamplingParams p;
    p.top_logprobs = 3;
    p.top_k = 1;
    auto r = sample(logits, p, {}, 9);
    CHECK(r.token == 1);
    CHECK_THAT(r.logprob, WithinAbs(std::log(sampling_test::softmax(logits)[1]), 1e-6));
    CHECK(r.top.size() == 3);
}

TEST_CASE("sampling logprobs: off by default, capped at the vocabulary", "[sampling]") {
    std::vector<float> logits{1.0f, 2.0f};
    auto r = sample(logits, SamplingParams{}, {}, 0);
    CHECK(r.logprob == 0);
    CHECK(r.top.empty());
    SamplingParams p;
    p.top_logprobs = 20;
    CHECK(sample(logits, p, {}, 0).top.size() == 2);
}
