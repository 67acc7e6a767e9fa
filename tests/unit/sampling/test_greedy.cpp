#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "radiance/sampling/sampler.h"

using namespace radiance::sampling;

TEST_CASE("sampling greedy: temperature 0 takes the argmax whatever the seed", "[sampling]") {
    std::vector<float> logits{0.1f, 2.5f, -1.0f, 2.4f};
    SamplingParams p;
    p.temperature = 0;
    for (uint64_t seed : {0ull, 1ull, 99ull})
        for (uint64_t pos : {0ull, 5ull, 1000ull}) {
            p.seed = seed;
            CHECK(sample(logits, p, {}, pos).token == 1);
        }
}

TEST_CASE("sampling greedy: ties go to the lowest id", "[sampling]") {
    std::vector<float> logits{1.0f, 3.0f, 0.0f, 3.0f, 3.0f};
    SamplingParams p;
    p.temperature = 0;
    CHECK(sample(logits, p, {}, 0).token == 1);
    p.temperature = -1;  // negative means greedy too
    CHECK(sample(logits, p, {}, 0).token == 1);
}

TEST_CASE("sampling greedy: NaN never wins, +inf does", "[sampling]") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float inf = std::numeric_limits<float>::infinity();
    SamplingParams p;
    p.temperature = 0;
    CHECK(sample(std::vector<float>{nan, 0.5f, nan}, p, {}, 0).token == 1);
    CHECK(sample(std::vector<float>{0.5f, nan, inf}, p, {}, 0).token == 2);
    p.temperature = 1;
    CHECK(sample(std::vector<float>{nan, -inf, 0.0f}, p, {}, 3).token == 2);
    CHECK(sample(std::vector<float>{-inf, -inf, -inf}, p, {}, 3).token == 0);
}

TEST_CASE("sampling greedy: a one-hot distribution is sampled as greedy", "[sampling]") {
    std::vector<float> logits(1000, -1e4f);
    logits[777] = 10;
    SamplingParams p;
    for (uint64_t pos = 0; pos < 50; ++pos) CHECK(sample(logits, p, {}, pos).token == 777);
}

TEST_CASE("sampling greedy: an empty row is an error", "[sampling]") {
    CHECK_THROWS_AS(sample(std::vector<float>{}, SamplingParams{}, {}, 0), std::invalid_argument);
}
