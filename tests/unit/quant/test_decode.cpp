// The core decoder (rad_decode.h): fp8 values from the OCP table, sub-byte bit streams and the
// affine formula on planes written by hand. Mutations each of these caught (made, watched fail,
// undone): the e4m3 exponent bias 120 -> 121 in the decoder fails "e4m3 by hand" (and the affine
// case); encoding without the round-half-even term fails "e4m3 rounds"; an I4 nibble read unsigned
// fails "sub-byte"; the zero point added instead of subtracted, and a scale plane's row read
// without its block of rows, fail "affine by hand"; dropping the transform check fails "what the
// core does not decode". The perm transform: each row written unscattered (o[j] = v[j]) fails
// "perm by hand" (and libref's gemm_q with perm, test_gemm_q_ref.cpp); rad_perm_check testing
// only the range (a repeated column accepted) fails "a perm table that is not a permutation".
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <radiance/rad_decode.h>

namespace {

float f16(float v) { return rad_f16_to_f32(rad_f32_to_f16(v)); }

// A plane of f16 values, row-major.
std::vector<uint8_t> f16_plane(const std::vector<float>& v) {
    std::vector<uint8_t> out(v.size() * 2);
    for (size_t i = 0; i < v.size(); ++i) {
        const uint16_t h = rad_f32_to_f16(v[i]);
        std::memcpy(&out[2 * i], &h, 2);
    }
    return out;
}

std::vector<float> decode(const RadEncoding& e, int64_t rows, int64_t cols, const std::vector<const void*>& planes, int64_t r0 = 0,
                          int64_t n = -1) {
    if (n < 0) n = rows - r0;
    std::vector<float> out(static_cast<size_t>(n * cols), NAN);
    REQUIRE(rad_decode_rows(&e, rows, cols, r0, n, planes.data(), out.data()) == RAD_OK);
    return out;
}

}  // namespace

TEST_CASE("e4m3 by hand: zero, subnormals, the normal range, 448 and NaN", "[decode]") {
    CHECK(rad_fp8_e4m3_to_f32(0x00) == 0.0f);
    CHECK(rad_fp8_e4m3_to_f32(0x01) == std::ldexp(1.0f, -9));      // smallest subnormal
    CHECK(rad_fp8_e4m3_to_f32(0x07) == 7 * std::ldexp(1.0f, -9));  // largest subnormal
    CHECK(rad_fp8_e4m3_to_f32(0x08) == std::ldexp(1.0f, -6));      // smallest normal
    CHECK(rad_fp8_e4m3_to_f32(0x38) == 1.0f);                      // e = 7: 2^0
    CHECK(rad_fp8_e4m3_to_f32(0x3c) == 1.5f);
    CHECK(rad_fp8_e4m3_to_f32(0x45) == 3.25f);  // e = 8, m = 5: 1.625 * 2
    CHECK(rad_fp8_e4m3_to_f32(0x7e) == 448.0f);
    CHECK(rad_fp8_e4m3_to_f32(0xb8) == -1.0f);
    CHECK(std::isnan(rad_fp8_e4m3_to_f32(0x7f)));
    CHECK(std::isnan(rad_fp8_e4m3_to_f32(0xff)));
}

TEST_CASE("e4m3 rounds to nearest even and saturates", "[decode]") {
    for (int c = 0; c < 256; ++c) {  // every finite code encodes back to itself
        if ((c & 0x7f) == 0x7f) continue;
        const float v = rad_fp8_e4m3_to_f32(static_cast<uint8_t>(c));
        CHECK(rad_f32_to_fp8_e4m3(v) == c);
    }
    CHECK(rad_f32_to_fp8_e4m3(0.3f) == 0x2a);                   // 0.3 -> 0.3125 (1.25 * 2^-2), the nearer of 0.28125 / 0.3125
    CHECK(rad_f32_to_fp8_e4m3(3.3f) == 0x45);                   // -> 3.25
    CHECK(rad_f32_to_fp8_e4m3(1.0625f) == 0x38);                // halfway between 1 and 1.125: to the even mantissa, 1
    CHECK(rad_f32_to_fp8_e4m3(1.1875f) == 0x3a);                // halfway between 1.125 and 1.25: to 1.25
    CHECK(rad_f32_to_fp8_e4m3(std::ldexp(1.5f, -9)) == 0x02);   // halfway between subnormals 1 and 2: 2
    CHECK(rad_f32_to_fp8_e4m3(std::ldexp(2.5f, -9)) == 0x02);   // between 2 and 3: 2
    CHECK(rad_f32_to_fp8_e4m3(std::ldexp(7.75f, -9)) == 0x08);  // rounds up into the first normal
    CHECK(rad_f32_to_fp8_e4m3(460.0f) == 0x7e);
    CHECK(rad_f32_to_fp8_e4m3(-1e9f) == 0xfe);
    CHECK(rad_f32_to_fp8_e4m3(INFINITY) == 0x7e);
    CHECK((rad_f32_to_fp8_e4m3(NAN) & 0x7f) == 0x7f);
}

TEST_CASE("sub-byte elements: a bit stream along the row, lowest bits first", "[decode]") {
    const uint8_t row[] = {0x8f, 0x07};  // nibbles in order: f, 8, 7, 0
    CHECK(rad_plane_load(RAD_I4, row, 0) == -1.0f);
    CHECK(rad_plane_load(RAD_I4, row, 1) == -8.0f);
    CHECK(rad_plane_load(RAD_I4, row, 2) == 7.0f);
    CHECK(rad_plane_load(RAD_I4, row, 3) == 0.0f);
    CHECK(rad_plane_load(RAD_U4, row, 0) == 15.0f);
    CHECK(rad_plane_load(RAD_U4, row, 1) == 8.0f);
    // u6 across bytes: 0x8f = 1000 1111, 0x07 = 0000 0111 -> bits 0..5 = 001111 (15),
    // bits 6..11 = 0111 10 read from the low end: 10 then 0111 -> 0b011110 = 30
    CHECK(rad_plane_load(RAD_U6, row, 0) == 15.0f);
    CHECK(rad_plane_load(RAD_U6, row, 1) == 30.0f);
    CHECK(rad_plane_load(RAD_U1, row, 4) == 0.0f);
    CHECK(rad_plane_load(RAD_U1, row, 7) == 1.0f);
    uint8_t w[2] = {0xff, 0xff};
    rad_plane_store_bits(RAD_I4, w, 1, static_cast<uint32_t>(-3));  // only element 1's bits change
    CHECK(w[0] == 0xdf);
    CHECK(w[1] == 0xff);
    rad_plane_store_bits(RAD_U6, w, 1, 0);  // bits 6..11
    CHECK(w[0] == 0x1f);
    CHECK(w[1] == 0xf0);
}

TEST_CASE("affine by hand: codes, groups of columns, a zero point, scale levels, a minimum", "[decode]") {
    // codes i8 [2 x 4], a f16 scale per 2 columns
    const int8_t codes[] = {1, -2, 3, -4, 5, 6, -7, 8};
    const auto scale = f16_plane({0.5f, 2.0f, 1.0f, 0.25f});
    RadEncoding e = rad_encoding_affine(RAD_I8);
    rad_encoding_add_tiled(&e, "scale", RAD_F16, 1, 2);
    CHECK(decode(e, 2, 4, {codes, scale.data()}) == std::vector<float>{0.5f, -1, 6, -8, 5, 6, -1.75f, 2});
    CHECK(decode(e, 2, 4, {codes, scale.data()}, 1, 1) == std::vector<float>{5, 6, -1.75f, 2});  // rows from r0

    // u4 codes with a u4 zero point per 2 columns: (code - zero) * scale
    const uint8_t ucodes[] = {0x30, 0xf9, 0x21, 0x43};  // row 0: 0 3 9 15, row 1: 1 2 3 4
    const uint8_t zeros[] = {0x23, 0x10};               // row 0: 3 2, row 1: 0 1
    RadEncoding z = rad_encoding_affine(RAD_U4);
    rad_encoding_add_tiled(&z, "scale", RAD_F16, 1, 2);
    rad_encoding_add_tiled(&z, "zero", RAD_U4, 1, 2);
    CHECK(decode(z, 2, 4, {ucodes, scale.data(), zeros}) == std::vector<float>{-1.5f, 0, 14, 26, 1, 2, 0.5f, 0.75f});

    // a second scale level over 2 x 4 blocks (one for the whole weight) and a minimum per row
    const auto s1 = f16_plane({0.5f});
    const float mins[] = {1.0f, -2.0f};
    RadEncoding m = rad_encoding_affine(RAD_I8);
    rad_encoding_add_tiled(&m, "min", RAD_F32, 1, 0);
    rad_encoding_add_tiled(&m, "scale.1", RAD_F16, 2, 4);
    rad_encoding_add_tiled(&m, "scale", RAD_F16, 1, 2);
    CHECK(decode(m, 2, 4, {codes, mins, s1.data(), scale.data()}) == std::vector<float>{-0.75f, -1.5f, 2, -5, 4.5f, 5, 1.125f, 3});

    // e4m3 codes with a scale per 2 x 2 block (a 3 x 3 weight: the blocks at the edges are partial)
    const uint8_t fcodes[] = {0x38, 0xb8, 0x3c, 0x45, 0x00, 0x7e, 0x40, 0x48, 0x30};  // 1 -1 1.5 / 3.25 0 448 / 2 4 0.5
    const float bs[] = {2.0f, 0.5f, 1.0f, -1.0f};
    RadEncoding f = rad_encoding_affine(RAD_FP8_E4M3);
    rad_encoding_add_tiled(&f, "scale", RAD_F32, 2, 2);
    CHECK(decode(f, 3, 3, {fcodes, bs}) == std::vector<float>{2, -2, 0.75f, 6.5f, 0, 224, 2, 4, -0.5f});

    // plain: the values as stored
    const auto p = f16_plane({1.0f / 3, -2.5f});
    CHECK(decode(rad_encoding_plain(RAD_F16), 1, 2, {p.data()}) == std::vector<float>{f16(1.0f / 3), -2.5f});
}

TEST_CASE("what the core does not decode is unsupported, a malformed encoding is a format error", "[decode]") {
    const int8_t codes[] = {1, 2};
    const float s[] = {1.0f};
    const std::vector<const void*> planes = {codes, s, s};
    float out[2];
    RadEncoding e = rad_encoding_affine(RAD_I8);
    rad_encoding_add_tiled(&e, "scale", RAD_F32, 1, 0);
    REQUIRE(rad_decode_rows(&e, 1, 2, 0, 1, planes.data(), out) == RAD_OK);

    RadEncoding other = e;
    std::strcpy(other.scheme, "q4k");  // a quantiser's own scheme: its decode hook's business
    CHECK(rad_decode_rows(&other, 1, 2, 0, 1, planes.data(), out) == RAD_E_UNSUPPORTED);
    RadEncoding givens = e;
    std::strcpy(givens.transform, "givens");  // a transform of a quantiser's own
    CHECK(rad_decode_rows(&givens, 1, 2, 0, 1, planes.data(), out) == RAD_E_UNSUPPORTED);
    RadEncoding perm = e;
    std::strcpy(perm.transform, "perm");  // the core's transform, without its table
    CHECK(rad_decode_rows(&perm, 1, 2, 0, 1, planes.data(), out) == RAD_E_FORMAT);
    RadEncoding signs = e;
    rad_encoding_add_tiled(&signs, "signs", RAD_U1, 1, 1);
    CHECK(rad_decode_rows(&signs, 1, 2, 0, 1, planes.data(), out) == RAD_E_UNSUPPORTED);

    RadEncoding gap = rad_encoding_affine(RAD_I8);
    rad_encoding_add_tiled(&gap, "scale.1", RAD_F32, 1, 0);  // a level without level 0
    CHECK(rad_decode_rows(&gap, 1, 2, 0, 1, planes.data(), out) == RAD_E_FORMAT);
    RadEncoding grouped_codes = rad_encoding_affine(RAD_I8);
    grouped_codes.planes[0].block_c = 2;  // a code covers one value
    CHECK(rad_decode_rows(&grouped_codes, 1, 2, 0, 1, planes.data(), out) == RAD_E_FORMAT);
    CHECK(rad_decode_rows(&e, 1, 2, 1, 1, planes.data(), out) == RAD_E_SHAPE);  // rows past the weight
}

// The perm transform (GPTQ act-order): stored column j is the weight's column perm[j], so each
// decoded row is scattered, w[perm[j]] = v[j], v decoded in the stored order (its groups are of
// stored columns).
TEST_CASE("perm by hand: each row scattered by the table, the groups those of the stored columns", "[decode]") {
    const int8_t codes[] = {1, -2, 3, -4, 5, 6, -7, 8};
    const auto scale = f16_plane({0.5f, 2.0f, 1.0f, 0.25f});  // per 2 stored columns
    const int32_t table[] = {2, 0, 3, 1};
    RadEncoding e = rad_encoding_affine(RAD_I8);
    rad_encoding_add_tiled(&e, "scale", RAD_F16, 1, 2);
    REQUIRE(rad_encoding_add_perm(&e, 4) == RAD_OK);
    CHECK(std::string(e.transform) == "perm");
    // v = [0.5 -1 6 -8 ; 5 6 -1.75 2] (as without the transform), w[perm[j]] = v[j]
    CHECK(decode(e, 2, 4, {codes, scale.data(), table}) == std::vector<float>{-1, -8, 0.5f, 6, 6, 2, 5, -1.75f});
    CHECK(decode(e, 2, 4, {codes, scale.data(), table}, 1, 1) == std::vector<float>{6, 2, 5, -1.75f});  // rows from r0
    CHECK(rad_encoding_add_perm(&e, 4) == RAD_E_ARG);                                                   // one transform
}

TEST_CASE("a perm table that is not a permutation of the columns, or not i32 [1 x cols], is a format error", "[decode]") {
    const int8_t codes[] = {1, 2, 3};
    const float s[] = {1.0f};
    float out[3];
    RadEncoding e = rad_encoding_affine(RAD_I8);
    rad_encoding_add_tiled(&e, "scale", RAD_F32, 1, 0);
    rad_encoding_add_perm(&e, 3);
    auto rc = [&](const RadEncoding& enc, const int32_t* table) {
        const std::vector<const void*> planes = {codes, s, table};
        return rad_decode_rows(&enc, 1, 3, 0, 1, planes.data(), out);
    };
    const int32_t good[] = {1, 2, 0}, repeated[] = {1, 1, 0}, negative[] = {0, -1, 2}, past[] = {0, 1, 3};
    CHECK(rc(e, good) == RAD_OK);
    CHECK(rc(e, repeated) == RAD_E_FORMAT);  // column 2 never written, column 1 twice
    CHECK(rc(e, negative) == RAD_E_FORMAT);
    CHECK(rc(e, past) == RAD_E_FORMAT);
    CHECK(rad_perm_check(good, 3) == RAD_OK);
    CHECK(rad_perm_check(repeated, 3) == RAD_E_FORMAT);
    RadEncoding u32 = e;
    u32.planes[2].dtype = RAD_U32;
    CHECK(rc(u32, good) == RAD_E_FORMAT);
    RadEncoding wide = e;
    wide.planes[2].cols = 4;  // a table of another width than the weight's columns
    CHECK(rc(wide, good) == RAD_E_FORMAT);
    RadEncoding tiled = e;
    tiled.planes[2].kind = RAD_PLANE_TILED;
    CHECK(rc(tiled, good) == RAD_E_FORMAT);
    RadEncoding stray = rad_encoding_affine(RAD_I8);  // a t.perm table without the transform: not the affine scheme's
    rad_encoding_add_tiled(&stray, "scale", RAD_F32, 1, 0);
    stray.planes[stray.n_planes] = e.planes[2];
    ++stray.n_planes;
    CHECK(rc(stray, good) == RAD_E_UNSUPPORTED);
}
