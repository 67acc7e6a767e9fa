// The ABI headers: C and C++ agree on the fingerprint; the narrowing helpers round to nearest even.
#include <catch2/catch.hpp>

#include <cmath>

#include <radiance/arch/rad_arch.h>

extern "C" uint64_t rad_test_c_fingerprint(void);

TEST_CASE("C and C++ compute one layout fingerprint", "[abi]") {
    constexpr uint64_t cpp = RAD_ABI_LAYOUT_FINGERPRINT;
    CHECK(rad_test_c_fingerprint() == cpp);
}

TEST_CASE("bf16 and f16 narrowing round to nearest even", "[abi]") {
    CHECK(rad_f32_to_bf16(1.0f) == 0x3f80);
    // 1 + 2^-8 lies exactly between two bf16 values: ties go to the even one (1.0).
    CHECK(rad_f32_to_bf16(1.0f + 1.0f / 256) == 0x3f80);
    CHECK(rad_f32_to_bf16(1.0f + 3.0f / 256) == 0x3f82);
    CHECK(rad_bf16_to_f32(rad_f32_to_bf16(-2.5f)) == -2.5f);
    CHECK(std::isnan(rad_bf16_to_f32(rad_f32_to_bf16(NAN))));
    CHECK(rad_f32_to_f16(1.0f) == 0x3c00);
    CHECK(rad_f32_to_f16(65504.0f) == 0x7bff);
    CHECK(rad_f32_to_f16(70000.0f) == 0x7c00);
    CHECK(rad_f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00);      // tie -> even
    CHECK(rad_f32_to_f16(5.960464477539063e-08f) == 0x0001);  // smallest subnormal
    for (uint32_t h = 0; h < 0x7c00; ++h) REQUIRE(rad_f32_to_f16(rad_f16_to_f32(static_cast<uint16_t>(h))) == h);
}

TEST_CASE("sub-byte planes pack lowest bits first", "[abi]") {
    uint8_t row[3] = {0, 0, 0};
    for (int i = 0; i < 6; ++i) rad_store_bits(RAD_U4, row, i, static_cast<uint32_t>(i + 9) & 15u);
    CHECK(row[0] == 0xa9);
    for (int i = 0; i < 6; ++i) CHECK(rad_load_bits(RAD_U4, row, i) == ((static_cast<uint32_t>(i + 9)) & 15u));
    uint8_t r6[6] = {};
    for (int i = 0; i < 8; ++i) rad_store_bits(RAD_U6, r6, i, static_cast<uint32_t>(i * 9));
    for (int i = 0; i < 8; ++i) CHECK(rad_load_bits(RAD_U6, r6, i) == static_cast<uint32_t>(i * 9));
}
