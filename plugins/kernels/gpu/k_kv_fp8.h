// k_kv_fp8.h: the fp8 KV cache on the card: rad_kv_fp8.h's rules as device code, bit for bit, so a
// card stores the codes and scales libref and libcpu store and reads back their values (rad-kbench
// compares the stored codes exactly). A scale a (token, kv head): amax / 448 over the head's
// values (infinities and NaN left out; 1 when all are zero; at least FLT_MIN); a code: e4m3fn of
// x / s, rounded to nearest even and saturating at +-448; a value read back: f32(code) * s. The
// quotients and products are IEEE single operations (__fdiv_rn, __fmul_rn), never contracted.
#pragma once
#include <cfloat>

#include "k_common.h"

namespace gpu {

constexpr float kKvFp8Max = 448.0f;  // RAD_KV_FP8_MAX

// rad_f32_to_fp8_e4m3.
__device__ __forceinline__ uint8_t kv_fp8_code(float f) {
    const uint32_t u = __float_as_uint(f), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);
    if (a < 0x3c800000u) {  // below 2^-6: a subnormal of e4m3, m * 2^-9
        const float v = __fmul_rn(__uint_as_float(a), 512.0f);
        uint32_t m = static_cast<uint32_t>(v);
        const float rem = __fsub_rn(v, static_cast<float>(m));
        if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
        return static_cast<uint8_t>(sign | m);
    }
    const uint32_t r = (a + 0x7ffffu + ((a >> 20) & 1u)) >> 20;  // 3 mantissa bits kept, rounded
    const uint32_t code = r - (120u << 3);                         // exponent bias 127 -> 7
    return static_cast<uint8_t>(sign | (code > 0x7eu ? 0x7eu : code));
}

// rad_fp8_e4m3_to_f32.
__device__ __forceinline__ float kv_fp8_value(uint32_t b) {
    const uint32_t e = (b >> 3) & 0xfu, m = b & 7u;
    if (e == 15 && m == 7) return __uint_as_float(0x7fc00000u);
    const float v = e == 0 ? static_cast<float>(m) * (1.0f / 512.0f) : __uint_as_float(((e + 120u) << 23) | (m << 20));
    return (b & 0x80u) ? -v : v;
}

// rad_kv_fp8_scale of a head's row, its values spread over a warp's lanes: every lane gets it.
// `amax` is the lane's own largest finite magnitude.
__device__ __forceinline__ float kv_fp8_scale(float amax) {
    amax = gpu_warp_max(amax);
    if (amax == 0.0f) return 1.0f;
    const float s = __fdiv_rn(amax, kKvFp8Max);
    return s < FLT_MIN ? FLT_MIN : s;
}

// A value's contribution to its lane's amax: NaN and infinities count as nothing.
__device__ __forceinline__ float kv_fp8_magnitude(float x) {
    const float a = fabsf(x);
    return a <= FLT_MAX ? a : 0.0f;  // NaN compares false
}

// rad_kv_fp8_load.
__device__ __forceinline__ float kv_fp8_load(uint32_t code, float scale) { return __fmul_rn(kv_fp8_value(code), scale); }

}  // namespace gpu
