#include <catch2/catch.hpp>

#include "radiance/sampling/counter_rng.h"
#include "sampling_test_util.h"

using namespace radiance::sampling;
using namespace sampling_test;

TEST_CASE("sampling determinism: the same seed and position give the same token", "[sampling]") {
    std::vector<float> logits;
    for (int i = 0; i < 500; ++i) logits.push_back(static_cast<float>(std::sin(i * 0.37) * 3));
    SamplingParams p;
    p.seed = 2024;
    p.top_p = 0.9f;
    Sampler a, b;
    std::vector<int32_t> first, second;
    for (uint64_t pos = 0; pos < 200; ++pos) first.push_back(a.sample(logits, p, {}, pos).token);
    // Another Sampler, in reverse order, with unrelated rows in between: same draws.
    std::vector<float> other(500, 0.0f);
    second.resize(200);
    for (uint64_t pos = 200; pos-- > 0;) {
        b.sample(other, p, {}, pos + 1000);
        second[pos] = b.sample(logits, p, {}, pos).token;
    }
    CHECK(first == second);

    p.seed = 2025;
    std::vector<int32_t> third;
    for (uint64_t pos = 0; pos < 200; ++pos) third.push_back(a.sample(logits, p, {}, pos).token);
    CHECK(first != third);
}

TEST_CASE("sampling distribution: draws follow softmax(logits)", "[sampling]") {
    std::vector<float> logits{1.0f, 0.0f, 2.0f, -1.0f, 0.5f};
    const int n = 40000;
    SamplingParams p;
    p.seed = 7;
    CHECK(chi_square(histogram(logits, p, n), softmax(logits), n) < 18.47);  // df 4, p = 0.001
}

TEST_CASE("sampling distribution: temperature sharpens and flattens", "[sampling]") {
    std::vector<float> logits{1.0f, 0.0f, 2.0f, -1.0f, 0.5f};
    const int n = 40000;
    for (float t : {0.5f, 2.0f}) {
        SamplingParams p;
        p.seed = 11;
        p.temperature = t;
        CAPTURE(t);
        CHECK(chi_square(histogram(logits, p, n), softmax(logits, t), n) < 18.47);
    }
}

TEST_CASE("sampling distribution: uniform logits over a larger vocabulary", "[sampling]") {
    std::vector<float> logits(50, 0.25f);
    const int n = 50000;
    SamplingParams p;
    p.seed = 3;
    CHECK(chi_square(histogram(logits, p, n), std::vector<double>(50, 1.0 / 50), n) < 85.35);  // df 49, p = 0.001
}
