// rad_kv_fp8.h (the fp8 KV cache's quantisation) against a reference written here from the
// definition alone: the e4m3fn values enumerated from their bit fields in double, the nearest one
// found by search (ties to the even code), saturation at 448.
//
// Mutations seen failing (2026-12-07, rad_kv_fp8.h changed, this test rebuilt): the scale from
// amax / 224 (12 checks: "maps onto 448 exactly"); rad_kv_fp8_scale without the all-zero case
// (s = 0); the tiny-row floor removed (amax 1e-40: s = 0, 3 checks). Not caught: x * (1 / s) in
// place of x / s (the product and the quotient straddle a rounding boundary too rarely for 300
// random rows; the definition says a quotient, and every library calls this one function).
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "radiance/rad_kv_fp8.h"

namespace {

// The value of e4m3fn code c (sign, 4 exponent bits of bias 7, 3 mantissa bits; S.1111.111 NaN).
double e4m3_value(int c) {
    const int e = (c >> 3) & 15, m = c & 7;
    const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
    return (c & 0x80) ? -mag : mag;
}

// The code nearest to q: every finite non-negative code searched, ties to the even mantissa,
// anything beyond 448 saturating to it; the sign kept (so -0 is 0x80).
int nearest_code(float q) {
    const bool neg = std::signbit(q);
    const double a = std::fabs(static_cast<double>(q));
    int best = 0;
    double best_d = INFINITY;
    for (int c = 0; c < 0x7f; ++c) {  // 0x7f is NaN
        const double d = std::fabs(e4m3_value(c) - a);
        if (d < best_d || (d == best_d && (c & 1) == 0)) {
            best = c;
            best_d = d;
        }
    }
    if (a >= 448.0) best = 0x7e;
    return neg ? (best | 0x80) : best;
}

float bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Stores x, checks every code against the reference and every read-back value against code * s.
float check_row(const std::vector<float>& x) {
    std::vector<uint8_t> codes(x.size(), 0xaa);
    const float s = rad_kv_fp8_store(x.data(), static_cast<int64_t>(x.size()), codes.data());
    REQUIRE(s > 0.0f);
    REQUIRE(std::isfinite(s));
    for (size_t i = 0; i < x.size(); ++i) {
        INFO("x[" << i << "] = " << x[i] << ", s = " << s);
        const float q = x[i] / s;
        CHECK(static_cast<int>(codes[i]) == nearest_code(q));
        CHECK((codes[i] & 0x7f) != 0x7f);  // never NaN
        const float back = rad_kv_fp8_load(codes[i], s);
        const float want = static_cast<float>(e4m3_value(codes[i])) * s;
        CHECK(std::memcmp(&back, &want, 4) == 0);
    }
    return s;
}

}  // namespace

TEST_CASE("kv fp8: the largest magnitude maps onto 448 exactly", "[kv_fp8]") {
    // amax 3.5: s = 3.5 / 448 = 2^-7 exactly, so 3.5 / s = 448 and reads back as 3.5
    std::vector<float> x = {3.5f, -1.0f, 0.1f, 0.0f};
    const float s = check_row(x);
    CHECK(s == 0.0078125f);
    std::vector<uint8_t> codes(4);
    rad_kv_fp8_store(x.data(), 4, codes.data());
    CHECK(codes[0] == 0x7e);
    CHECK(rad_kv_fp8_load(codes[0], s) == 3.5f);
    // the largest magnitude negative: -448 s
    x = {-3.5f, 1.0f};
    rad_kv_fp8_store(x.data(), 2, codes.data());
    CHECK(codes[0] == 0xfe);
    // an amax whose quotient rounds a hair above 448 still saturates to 448, never to NaN
    for (float a : {0.3f, 1.7f, 123.456f, 3.0e-20f, 7.7e30f}) {
        x = {a, -a / 3};
        check_row(x);
    }
}

TEST_CASE("kv fp8: zeros, negative zero and tiny rows", "[kv_fp8]") {
    std::vector<float> zeros(8, 0.0f);
    CHECK(check_row(zeros) == 1.0f);  // all zero: s = 1
    std::vector<uint8_t> codes(3);
    std::vector<float> x = {-0.0f, 0.0f, 1.0f};
    rad_kv_fp8_store(x.data(), 3, codes.data());
    CHECK(codes[0] == 0x80);
    CHECK(std::signbit(rad_kv_fp8_load(codes[0], 1.0f / 448.0f)));
    check_row(x);
    check_row({-0.0f, -0.0f});  // a row of negative zeros: s = 1, codes 0x80
    // values far below the row's largest: e4m3 subnormals, then zero
    check_row({1.0f, 1e-3f, 3e-4f, 1e-6f, -2e-5f});
    // a row of tiny values: a normal scale
    check_row({1e-30f, -2e-31f, 5e-32f});
    // a row so small that amax / 448 is below the smallest normal: the scale stops at FLT_MIN
    CHECK(check_row({1e-40f, -3e-41f}) == FLT_MIN);
    CHECK(check_row({bits(1)}) == FLT_MIN);  // the smallest subnormal
}

TEST_CASE("kv fp8: ties round to the even code", "[kv_fp8]") {
    // s = 1 (amax 448): quotients are the values themselves
    const float mid_1_1125 = 1.0625f;   // between 1 (0x38) and 1.125 (0x39): to 1
    const float mid_1125_125 = 1.1875f;  // between 1.125 (0x39) and 1.25 (0x3a): to 1.25
    const float sub_mid = std::ldexp(1.5f, -9);  // between 2^-9 (0x01) and 2^-8 (0x02): to 0x02
    const float zero_mid = std::ldexp(1.0f, -10);  // between 0 and 2^-9: to 0
    std::vector<float> x = {448.0f, mid_1_1125, mid_1125_125, sub_mid, zero_mid, -mid_1_1125};
    std::vector<uint8_t> codes(x.size());
    CHECK(rad_kv_fp8_store(x.data(), static_cast<int64_t>(x.size()), codes.data()) == 1.0f);
    CHECK(codes[1] == 0x38);
    CHECK(codes[2] == 0x3a);
    CHECK(codes[3] == 0x02);
    CHECK(codes[4] == 0x00);
    CHECK(codes[5] == 0xb8);
    check_row(x);
}

TEST_CASE("kv fp8: infinities saturate, NaN does not set the scale", "[kv_fp8]") {
    std::vector<float> x = {INFINITY, 2.0f, -INFINITY};
    std::vector<uint8_t> codes(3);
    const float s = rad_kv_fp8_store(x.data(), 3, codes.data());
    CHECK(s == 2.0f / 448.0f);
    CHECK(codes[0] == 0x7e);
    CHECK(codes[1] == 0x7e);
    CHECK(codes[2] == 0xfe);
    x = {NAN, 1.0f};
    CHECK(rad_kv_fp8_store(x.data(), 2, codes.data()) == 1.0f / 448.0f);
    CHECK(codes[1] == 0x7e);
}

TEST_CASE("kv fp8: random rows of every magnitude", "[kv_fp8]") {
    std::mt19937 rng(7);
    std::normal_distribution<float> n(0.0f, 1.0f);
    std::uniform_int_distribution<int> ex(-40, 40);
    for (int r = 0; r < 300; ++r) {
        std::vector<float> x(static_cast<size_t>(16 + r % 113));
        const float mag = std::ldexp(1.0f, ex(rng));
        for (auto& v : x) v = n(rng) * mag * (r % 5 == 0 ? std::ldexp(1.0f, ex(rng) / 4) : 1.0f);
        check_row(x);
    }
}
