// simd_scalar.h: the portable one-lane "vector" the kernel bodies compile against for level 0
// (any x86-64, or any other CPU). Plain C++; the compiler may still use SSE2 on its own.
#pragma once
#include <radiance/rad_plugin.h>

#include <cmath>
#include <cstdint>

#define CPU_TARGET
#define CPU_VFN static inline __attribute__((always_inline))

namespace cpu {

struct VScalar {
    using R = float;
    static constexpr int W = 1;
    CPU_VFN R zero() { return 0.0f; }
    CPU_VFN R set1(float v) { return v; }
    CPU_VFN R load(const float* p) { return *p; }
    CPU_VFN void store(float* p, R v) { *p = v; }
    CPU_VFN R load_bf16(const uint16_t* p) { return rad_bf16_to_f32(*p); }
    CPU_VFN R load_f16(const uint16_t* p) { return rad_f16_to_f32(*p); }
    CPU_VFN R add(R a, R b) { return a + b; }
    CPU_VFN R sub(R a, R b) { return a - b; }
    CPU_VFN R mul(R a, R b) { return a * b; }
    CPU_VFN R div(R a, R b) { return a / b; }
    CPU_VFN R max(R a, R b) { return std::fmax(a, b); }
    CPU_VFN R fma(R a, R b, R c) { return a * b + c; }   // a*b + c
    CPU_VFN R fnma(R a, R b, R c) { return c - a * b; }  // c - a*b
    CPU_VFN R abs(R a) { return std::fabs(a); }
    CPU_VFN R copysign(R mag, R sgn) { return std::copysign(mag, sgn); }
    CPU_VFN float hsum(R v) { return v; }
    CPU_VFN R hsum_rows(const R* a) { return a[0]; }
    CPU_VFN float hmax(R v) { return v; }
    CPU_VFN R exp(R x) { return std::exp(x); }
    CPU_VFN R swap_pairs(R v) { return v; }  // never called: one lane holds no pair (body_rope.inc)
    // Quantised codes (body_gemm_q.inc): one lane of int32 codes, converted exactly to f32.
    using I = int32_t;
    CPU_VFN I iset1(int32_t v) { return v; }
    CPU_VFN I isub(I a, I b) { return a - b; }
    CPU_VFN I ixor(I a, I b) { return a ^ b; }
    CPU_VFN R cvt(I v) { return static_cast<float>(v); }
    CPU_VFN I load_i8(const uint8_t* row, int64_t k) { return static_cast<int8_t>(row[k]); }
    CPU_VFN I load_u8(const uint8_t* row, int64_t k) { return row[k]; }
    // Codes k and k + 1 of a 4-bit row (k even): the byte's low and high nibble.
    CPU_VFN void load_nibbles(const uint8_t* row, int64_t k, I& lo, I& hi) {
        lo = row[k >> 1] & 15;
        hi = row[k >> 1] >> 4;
    }
    CPU_VFN R load_e4m3(const uint8_t* row, int64_t k) {
        const int b = row[k], e = (b >> 3) & 15, m = b & 7;
        const float v = e == 0 ? static_cast<float>(m) * (1.0f / 512.0f) : std::ldexp(1.0f + static_cast<float>(m) / 8.0f, e - 7);
        return (b & 0x80) ? -v : v;
    }
};

}  // namespace cpu
