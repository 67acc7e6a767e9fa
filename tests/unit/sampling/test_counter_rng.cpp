#include <catch2/catch.hpp>

#include <set>

#include "radiance/sampling/counter_rng.h"

using namespace radiance::sampling;

// Known-answer vectors of Philox4x32-10 published with Random123 (kat_vectors).
TEST_CASE("sampling rng: Philox4x32-10 known answers", "[sampling]") {
    CHECK(philox4x32_10({0, 0, 0, 0}, {0, 0}) == PhiloxCounter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
    CHECK(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}) ==
          PhiloxCounter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu});
    CHECK(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}) ==
          PhiloxCounter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u});
}

TEST_CASE("sampling rng: uniform_at is a pure function of seed and position", "[sampling]") {
    CHECK(uniform_at(42, 7) == uniform_at(42, 7));
    CHECK(uniform_at(42, 7) != uniform_at(42, 8));
    CHECK(uniform_at(42, 7) != uniform_at(43, 7));
    CHECK(uniform_at(42, 7, 0) != uniform_at(42, 7, 1));
    // High bits of seed and position matter too.
    CHECK(uniform_at(1ull << 40, 0) != uniform_at(0, 0));
    CHECK(uniform_at(0, 1ull << 40) != uniform_at(0, 0));
}

TEST_CASE("sampling rng: uniform_at lies in 0 <= u < 1 and fills it evenly", "[sampling]") {
    const int n = 100000;
    int bins[10] = {};
    std::set<double> distinct;
    for (int i = 0; i < n; ++i) {
        double u = uniform_at(1234, static_cast<uint64_t>(i));
        REQUIRE(u >= 0.0);
        REQUIRE(u < 1.0);
        ++bins[static_cast<int>(u * 10)];
        distinct.insert(u);
    }
    double chi = 0;
    for (int b : bins) chi += (b - n / 10.0) * (b - n / 10.0) / (n / 10.0);
    CHECK(chi < 27.9);  // chi-square, 9 degrees of freedom, p = 0.001
    CHECK(distinct.size() == static_cast<size_t>(n));
}
