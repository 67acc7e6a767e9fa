// libquant's quantisers: planes against values computed by hand for a few rows, elementwise and
// Frobenius round-trip bounds on Gaussian weights, streaming (row blocks give the same bytes as
// one call) and the refusals rad-convert turns into named errors.
//
// Mutations each of these caught (made in libquant, watched fail, undone): rounding codes with
// truncation toward zero fails the three "by hand" rtn cases and the round trip; the symmetric
// scale from +2^(bits-1) (max / 8 instead of max / -8) fails "rtn int8 by hand", "rtn int4 by hand",
// "the stored scale is the one the codes use" and the round trip; the zero point's range not
// widened to hold 0 fails "rtn with a zero point by hand"; codes computed from the unrounded scale
// fails "the stored scale is the one the codes use"; rows not zeroed before their nibbles are
// written fails "rtn int4 by hand" (the odd row); fp8's scale over 240 instead of 448 fails "fp8
// per row by hand" and "fp8 blocks by hand"; a block's scale from its first row only fails "fp8
// round trips"; cast truncating instead of rounding fails "cast rounds".
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "quant_test_util.h"

using qtest::decode;
using qtest::quantizer;
using qtest::run;

namespace {

uint16_t u16(const std::vector<uint8_t>& p, size_t i) {
    uint16_t v;
    std::memcpy(&v, &p[2 * i], 2);
    return v;
}

float f16_at(const std::vector<uint8_t>& p, size_t i) { return rad_f16_to_f32(u16(p, i)); }

}  // namespace

TEST_CASE("rtn int8 by hand: the group's largest magnitude is code -128", "[quant]") {
    // two rows, groups of 4: row 0 [1, -2, 0.5, 0.25 | 3, 1, -1, 0.75], row 1 [0 x 4 | 0.1 ...]
    const std::vector<float> w = {1, -2, 0.5f, 0.25f, 3, 1, -1, 0.75f, 0, 0, 0, 0, 0.25f, -0.125f, 0.0625f, 0.5f};
    auto q = run(quantizer("rtn"), w, 2, 8, {{"bits", "8"}, {"group", "4"}});
    REQUIRE(q.rc == RAD_OK);
    REQUIRE(q.enc.n_planes == 2);
    CHECK(std::string(q.enc.scheme) == "affine");
    CHECK(q.enc.planes[0].dtype == RAD_I8);
    CHECK(q.enc.planes[1].dtype == RAD_F16);
    CHECK(q.enc.planes[1].block_c == 4);
    // scales m / -128: -2 -> 1/64, 3 -> -3/128, 0 -> 0, 0.5 -> -1/256 (all exact in f16)
    CHECK(f16_at(q.planes[1], 0) == 1.0f / 64);
    CHECK(f16_at(q.planes[1], 1) == -3.0f / 128);
    CHECK(f16_at(q.planes[1], 2) == 0.0f);
    CHECK(f16_at(q.planes[1], 3) == -1.0f / 256);
    const auto* c = reinterpret_cast<const int8_t*>(q.planes[0].data());
    // 1 / (1/64) = 64; -2 -> -128; 0.5 -> 32; 0.25 -> 16 | 3 / (-3/128) = -128; 1 -> -42.67 -> -43; -1 -> 43; 0.75 -> -32
    CHECK(std::vector<int>(c, c + 8) == std::vector<int>{64, -128, 32, 16, -128, -43, 43, -32});
    // 0 | 0.25 * -256 = -64; -0.125 -> 32; 0.0625 -> -16; 0.5 -> -128
    CHECK(std::vector<int>(c + 8, c + 16) == std::vector<int>{0, 0, 0, 0, -64, 32, -16, -128});
}

TEST_CASE("rtn int4 by hand: nibbles packed low first, the range [-8, 7]", "[quant]") {
    // one group of 4 per row: [0.75, -0.375, 0.125, 1.5]: m = 1.5, scale -0.1875;
    // codes -4, 2, -0.67 -> -1, -8 ; row 1: [-1.5, 1.5, 0.09375, 0] m = -1.5 (the first of equal
    // magnitudes), scale 0.1875: -8, 8 -> 7 (clamped), 0.5 -> 0 (half to even), 0
    const std::vector<float> w = {0.75f, -0.375f, 0.125f, 1.5f, -1.5f, 1.5f, 0.09375f, 0};
    auto q = run(quantizer("rtn"), w, 2, 4, {{"bits", "4"}, {"group", "4"}});
    REQUIRE(q.rc == RAD_OK);
    CHECK(q.enc.planes[0].dtype == RAD_I4);
    CHECK(f16_at(q.planes[1], 0) == -0.1875f);
    CHECK(f16_at(q.planes[1], 1) == 0.1875f);
    REQUIRE(q.planes[0].size() == 4);  // 2 rows of 2 bytes
    CHECK(q.planes[0][0] == 0x2c);     // -4 = 0xc, 2
    CHECK(q.planes[0][1] == 0x8f);     // -1 = 0xf, -8 = 0x8
    CHECK(q.planes[0][2] == 0x78);     // -8, 7
    CHECK(q.planes[0][3] == 0x00);
    const auto d = decode(q, 2, 4);
    CHECK(d == std::vector<float>{0.75f, -0.375f, 0.1875f, 1.5f, -1.5f, 1.3125f, 0, 0});
    // an odd row: the last byte's unused nibble is zero, whatever the buffer held
    auto odd = run(quantizer("rtn"), {0.75f, -0.375f, 1.5f}, 1, 3, {{"bits", "4"}, {"group", "0"}});
    REQUIRE(odd.rc == RAD_OK);
    REQUIRE(odd.planes[0].size() == 2);
    CHECK(odd.planes[0][1] == 0x08);
}

TEST_CASE("rtn with a zero point by hand: the range widened to hold 0", "[quant]") {
    // [-1.5, 0, 3, 6]: scale 7.5 / 15 = 0.5, zero round(1.5 / 0.5) = 3, codes 0 3 9 15
    // [1, 2, 4, 2.5]: the range [0, 4] (0 included): scale 4 / 15, zero 0
    const std::vector<float> w = {-1.5f, 0, 3, 6, 1, 2, 4, 2.5f};
    auto q = run(quantizer("rtn"), w, 2, 4, {{"bits", "4"}, {"group", "4"}, {"zero", "1"}});
    REQUIRE(q.rc == RAD_OK);
    REQUIRE(q.enc.n_planes == 3);
    CHECK(q.enc.planes[0].dtype == RAD_U4);
    CHECK(std::string(q.enc.planes[2].role) == "zero");
    CHECK(q.enc.planes[2].dtype == RAD_U4);
    CHECK(f16_at(q.planes[1], 0) == 0.5f);
    CHECK(q.planes[0][0] == 0x30);
    CHECK(q.planes[0][1] == 0xf9);
    CHECK((q.planes[2][0] & 0x0f) == 3);
    const float s1 = f16_at(q.planes[1], 1);
    CHECK(s1 == rad_f16_to_f32(rad_f32_to_f16(4.0f / 15)));
    CHECK((q.planes[2][1] & 0x0f) == 0);
    const auto d = decode(q, 2, 4);
    CHECK(std::vector<float>(d.begin(), d.begin() + 4) == std::vector<float>{-1.5f, 0, 3, 6});
    for (int k = 0; k < 4; ++k) CHECK(std::fabs(d[4 + k] - w[4 + k]) <= s1 / 2);
}

TEST_CASE("the stored scale is the one the codes use", "[quant]") {
    // 1/3 is not an f16: the codes are computed from the rounded scale, so the extreme value's
    // code is exactly -128 and decodes to -128 * s, the nearest the stored scale allows.
    // 33.496 is 100.488 unrounded scales but 100.512 of the stored one: code 101, not 100
    const std::vector<float> w = {-1.0f / 3 * 128, 10, 33.496f, 30};
    auto q = run(quantizer("rtn"), w, 1, 4, {{"group", "0"}});
    REQUIRE(q.rc == RAD_OK);
    CHECK(q.enc.planes[1].block_c == 0);  // group 0: one scale per row
    const float s = f16_at(q.planes[1], 0);
    CHECK(s == rad_f16_to_f32(rad_f32_to_f16(1.0f / 3)));
    const auto* c = reinterpret_cast<const int8_t*>(q.planes[0].data());
    CHECK(c[0] == -128);
    CHECK(c[1] == static_cast<int>(std::nearbyint(10 / s)));
    CHECK(c[2] == 101);
    CHECK(c[3] == static_cast<int>(std::nearbyint(30 / s)));
}

TEST_CASE("rtn round trips within a step, nearly all within half a step", "[quant]") {
    const int64_t rows = 48, cols = 512;
    const auto w = qtest::gaussian(static_cast<size_t>(rows * cols), 0.02f, 7);
    struct Case {
        std::map<std::string, std::string> opts;
        double frob;  // bound on ||w - dec|| / ||w||, 1.25x what this draw measures (in the comment)
    };
    for (const Case& cs : {Case{{{"bits", "8"}}, 0.008} /* 0.0064 */, Case{{{"bits", "8"}, {"zero", "1"}}, 0.0074} /* 0.0059 */,
                           Case{{{"bits", "4"}}, 0.129} /* 0.103 */, Case{{{"bits", "4"}, {"zero", "1"}}, 0.125} /* 0.100 */,
                           Case{{{"bits", "4"}, {"group", "32"}}, 0.107} /* 0.086 */}) {
        auto q = run(quantizer("rtn"), w, rows, cols, cs.opts);
        REQUIRE(q.rc == RAD_OK);
        const auto d = decode(q, rows, cols);
        const int64_t group = cs.opts.count("group") ? std::stoll(cs.opts.at("group")) : 128;
        int64_t over_step = 0, over_half = 0;
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t k = 0; k < cols; ++k) {
                const float s = std::fabs(f16_at(q.planes[1], static_cast<size_t>(i * (cols / group) + k / group)));
                const float e = std::fabs(d[i * cols + k] - w[i * cols + k]);
                // rounding is half a step; a code clamped at the range's edge (symmetric: the side
                // opposite the extreme; with a zero point: the zero point's own rounding) a step
                over_step += e > s * 1.0001f;
                over_half += e > s * 0.5001f;
            }
        const double e = qtest::rel_frobenius(d, w);
        INFO(cs.opts.size() << " options, error " << e << ", " << over_half << " values over half a step");
        CHECK(over_step == 0);
        CHECK(over_half <= rows * cols / 100);  // measured 1 to 125 of 24,576
        CHECK(e < cs.frob);
        CHECK(e > cs.frob / 4);  // and not suspiciously exact
    }
}

TEST_CASE("fp8 per row by hand: the row's largest magnitude is 448", "[quant]") {
    // row 0: amax 448 -> scale 1: codes are e4m3 of the values; row 1 amax 4.48 -> scale 0.01
    const std::vector<float> w = {448, -1, 0.3f, 3.3f, 4.48f, -0.01f, 0, 1};
    auto q = run(quantizer("fp8"), w, 2, 4, {});
    REQUIRE(q.rc == RAD_OK);
    CHECK(q.enc.planes[0].dtype == RAD_FP8_E4M3);
    CHECK(q.enc.planes[1].dtype == RAD_F32);
    CHECK(q.enc.planes[1].block_c == 0);
    float s[2];
    std::memcpy(s, q.planes[1].data(), 8);
    CHECK(s[0] == 1.0f);
    CHECK(s[1] == 4.48f / 448.0f);
    CHECK(std::vector<uint8_t>(q.planes[0].begin(), q.planes[0].begin() + 4) == std::vector<uint8_t>{0x7e, 0xb8, 0x2a, 0x45});
    CHECK(q.planes[0][4] == 0x7e);  // 4.48 / s is 448 (up to rounding, saturated)
    CHECK(q.planes[0][5] == rad_f32_to_fp8_e4m3(-0.01f / s[1]));
    CHECK(q.planes[0][6] == 0x00);
}

TEST_CASE("fp8 blocks by hand: one scale per block of rows and columns", "[quant]") {
    // 3 x 3 in 2 x 2 blocks: block (0,0) = rows 0-1, cols 0-1 has amax 8.96 -> scale 0.02
    const std::vector<float> w = {1, -8.96f, 0.5f, 2, 4, -0.25f, 0.448f, 0, 44.8f};
    auto q = run(quantizer("fp8"), w, 3, 3, {{"block", "2"}});
    REQUIRE(q.rc == RAD_OK);
    CHECK(q.enc.planes[1].block_r == 2);
    CHECK(q.enc.planes[1].block_c == 2);
    float s[4];
    REQUIRE(q.planes[1].size() == 16);
    std::memcpy(s, q.planes[1].data(), 16);
    CHECK(s[0] == 8.96f / 448);
    CHECK(s[1] == 0.5f / 448);
    CHECK(s[2] == 0.448f / 448);
    CHECK(s[3] == 44.8f / 448);
    CHECK(q.planes[0][1] == 0xfe);  // -8.96 is the block's extreme: -448
    CHECK(q.planes[0][8] == 0x7e);
}

TEST_CASE("fp8 round trips within e4m3's relative step", "[quant]") {
    const int64_t rows = 256, cols = 384;
    const auto w = qtest::gaussian(static_cast<size_t>(rows * cols), 0.02f, 11);
    for (const char* block : {"0", "128"}) {
        auto q = run(quantizer("fp8"), w, rows, cols, {{"block", block}});
        REQUIRE(q.rc == RAD_OK);
        const auto d = decode(q, rows, cols);
        const double e = qtest::rel_frobenius(d, w);
        INFO("block " << block << " error " << e);
        CHECK(e < 0.04);  // measured 0.022 per row, 0.022 in blocks: 3 mantissa bits
        CHECK(e > 0.01);
        // every value within half an e4m3 step of its magnitude, or half the subnormal step
        for (size_t i = 0; i < w.size(); ++i) {
            const float s = std::string(block) == "0" ? reinterpret_cast<const float*>(q.planes[1].data())[i / cols] : 0.0f;
            if (s == 0.0f) continue;
            CHECK(std::fabs(d[i] - w[i]) <= std::max(std::fabs(w[i]) / 16, s * std::ldexp(1.0f, -10)) * 1.0001f);
        }
    }
}

TEST_CASE("cast rounds to nearest even", "[quant]") {
    const std::vector<float> w = {1.0f / 3, -2.5f, 1e-8f, 65520.0f};
    auto b = run(quantizer("cast"), w, 1, 4, {});
    REQUIRE(b.rc == RAD_OK);
    CHECK(std::string(b.enc.scheme) == "plain");
    CHECK(b.enc.planes[0].dtype == RAD_BF16);  // the default
    CHECK(u16(b.planes[0], 0) == 0x3eab);      // 1/3 = 0x3eaaaaab: rounds up
    auto h = run(quantizer("cast"), w, 1, 4, {{"dtype", "f16"}});
    REQUIRE(h.rc == RAD_OK);
    CHECK(u16(h.planes[0], 0) == 0x3555);
    CHECK(u16(h.planes[0], 3) == 0x7c00);  // 65520 rounds to infinity in f16
    auto f = run(quantizer("cast"), w, 1, 4, {{"dtype", "f32"}});
    CHECK(decode(f, 1, 4) == w);
}

TEST_CASE("row blocks give the bytes one call gives", "[quant]") {
    const int64_t rows = 300, cols = 256;
    const auto w = qtest::gaussian(static_cast<size_t>(rows * cols), 1.0f, 3);
    for (auto [name, opts, block] : {std::tuple<const char*, std::map<std::string, std::string>, int64_t>{"rtn", {{"bits", "4"}}, 7},
                                     {"rtn", {{"bits", "8"}, {"zero", "1"}, {"group", "64"}}, 13},
                                     {"fp8", {{"block", "128"}}, 128},
                                     {"fp8", {}, 1},
                                     {"cast", {{"dtype", "f16"}}, 33}}) {
        auto whole = run(quantizer(name), w, rows, cols, opts, rows);
        auto parts = run(quantizer(name), w, rows, cols, opts, block);
        REQUIRE(whole.rc == RAD_OK);
        REQUIRE(parts.rc == RAD_OK);
        CHECK(whole.planes == parts.planes);
    }
    CHECK(quantizer("fp8").row_block != nullptr);
    RadEncoding e;
    const char* k[] = {"block"};
    const char* v[] = {"128"};
    REQUIRE(quantizer("fp8").encoding("w", rows, cols, k, v, 1, &e) == RAD_OK);
    CHECK(quantizer("fp8").row_block(&e, rows, cols) % 128 == 0);  // blocks of rows are never split
}

TEST_CASE("refusals: an option value out of range, a group that does not divide the row", "[quant]") {
    const std::vector<float> w(2 * 256, 1.0f);
    CHECK(run(quantizer("rtn"), w, 2, 256, {{"bits", "5"}}).rc == RAD_E_ARG);
    CHECK(run(quantizer("rtn"), w, 2, 256, {{"bits", "four"}}).rc == RAD_E_ARG);
    CHECK(run(quantizer("rtn"), w, 2, 256, {{"zero", "2"}}).rc == RAD_E_ARG);
    CHECK(run(quantizer("rtn"), w, 2, 256, {{"scale", "f8"}}).rc == RAD_E_ARG);
    CHECK(run(quantizer("rtn"), w, 2, 256, {{"colour", "red"}}).rc == RAD_E_ARG);
    CHECK(run(quantizer("rtn"), w, 2, 256, {{"group", "100"}}).rc == RAD_E_SHAPE);
    CHECK(run(quantizer("rtn"), w, 1, 512, {{"group", "100"}}).rc == RAD_E_SHAPE);
    CHECK(run(quantizer("fp8"), w, 2, 256, {{"block", "-1"}}).rc == RAD_E_ARG);
    CHECK(run(quantizer("cast"), w, 2, 256, {{"dtype", "i8"}}).rc == RAD_E_ARG);
    CHECK(quantizer("rtn").decode == nullptr);  // affine: the core decodes it
}
