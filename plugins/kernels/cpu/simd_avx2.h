// simd_avx2.h: the 8-lane f32 vector the kernel bodies compile against for level 1
// (AVX2 + FMA + F16C). Every function carries the target attribute; nothing here may be called
// from code compiled for another level.
#pragma once
#include <immintrin.h>

#include <cstdint>

#define CPU_TARGET __attribute__((target("avx2,fma,f16c")))
#define CPU_VFN static inline __attribute__((always_inline, target("avx2,fma,f16c")))

namespace cpu {

struct VAvx2 {
    using R = __m256;
    static constexpr int W = 8;
    CPU_VFN R zero() { return _mm256_setzero_ps(); }
    CPU_VFN R set1(float v) { return _mm256_set1_ps(v); }
    CPU_VFN R load(const float* p) { return _mm256_loadu_ps(p); }
    CPU_VFN void store(float* p, R v) { _mm256_storeu_ps(p, v); }
    // bf16 is the top half of an f32: widen the 16-bit lanes to 32 and shift them up.
    CPU_VFN R load_bf16(const uint16_t* p) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
        return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    CPU_VFN R load_f16(const uint16_t* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
    // Quantised codes (body_gemm_q.inc): W int32 codes a vector, converted exactly to f32.
    using I = __m256i;
    CPU_VFN I iset1(int32_t v) { return _mm256_set1_epi32(v); }
    CPU_VFN I isub(I a, I b) { return _mm256_sub_epi32(a, b); }
    CPU_VFN I ixor(I a, I b) { return _mm256_xor_si256(a, b); }
    CPU_VFN R cvt(I v) { return _mm256_cvtepi32_ps(v); }
    CPU_VFN I load_i8(const uint8_t* row, int64_t k) { return _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + k))); }
    CPU_VFN I load_u8(const uint8_t* row, int64_t k) { return _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + k))); }
    // Codes k .. k + 2W of a 4-bit row from its W bytes at k / 2: the low nibbles (codes k, k + 2,
    // ...) and the high ones (k + 1, k + 3, ...), each W lanes; x is read in the same order.
    CPU_VFN void load_nibbles(const uint8_t* row, int64_t k, I& lo, I& hi) {
        const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + k / 2)), m = _mm_set1_epi8(15);
        lo = _mm256_cvtepu8_epi32(_mm_and_si128(b, m));
        hi = _mm256_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(b, 4), m));
    }
    // e4m3 as the f16 with its bits one place up (sign to bit 15, exponent and mantissa to bits
    // 7-14), which is the value times 2^-8 for normals and subnormals alike: widened, times 256.
    CPU_VFN R load_e4m3(const uint8_t* row, int64_t k) {
        const __m128i b = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + k)));
        const __m128i h = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x80)), 8),
                                       _mm_slli_epi16(_mm_and_si128(b, _mm_set1_epi16(0x7f)), 7));
        return _mm256_mul_ps(_mm256_cvtph_ps(h), _mm256_set1_ps(256.0f));
    }
    CPU_VFN R add(R a, R b) { return _mm256_add_ps(a, b); }
    CPU_VFN R sub(R a, R b) { return _mm256_sub_ps(a, b); }
    CPU_VFN R mul(R a, R b) { return _mm256_mul_ps(a, b); }
    CPU_VFN R div(R a, R b) { return _mm256_div_ps(a, b); }
    CPU_VFN R max(R a, R b) { return _mm256_max_ps(a, b); }
    CPU_VFN R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
    CPU_VFN R fnma(R a, R b, R c) { return _mm256_fnmadd_ps(a, b, c); }
    CPU_VFN R abs(R a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
    CPU_VFN R copysign(R mag, R sgn) {
        const R s = _mm256_set1_ps(-0.0f);
        return _mm256_or_ps(_mm256_andnot_ps(s, mag), _mm256_and_ps(s, sgn));
    }
    // The W vectors a[0..8) into one whose lane i is the sum of a[i]'s lanes (a reduction tree:
    // pairs of lanes, then of 64-bit halves, then of the two 128-bit halves).
    CPU_VFN R hsum_rows(const R* a) {
        R u[4], v[2];
        for (int i = 0; i < 4; ++i)
            u[i] = _mm256_add_ps(_mm256_unpacklo_ps(a[2 * i], a[2 * i + 1]), _mm256_unpackhi_ps(a[2 * i], a[2 * i + 1]));
        for (int i = 0; i < 2; ++i) {
            const __m256d x = _mm256_castps_pd(u[2 * i]), y = _mm256_castps_pd(u[2 * i + 1]);
            v[i] = _mm256_add_ps(_mm256_castpd_ps(_mm256_unpacklo_pd(x, y)), _mm256_castpd_ps(_mm256_unpackhi_pd(x, y)));
        }
        return _mm256_add_ps(_mm256_permute2f128_ps(v[0], v[1], 0x20), _mm256_permute2f128_ps(v[0], v[1], 0x31));
    }
    CPU_VFN float hsum(R v) {
        __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        x = _mm_add_ps(x, _mm_movehl_ps(x, x));
        x = _mm_add_ss(x, _mm_shuffle_ps(x, x, 1));
        return _mm_cvtss_f32(x);
    }
    CPU_VFN float hmax(R v) {
        __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        x = _mm_max_ps(x, _mm_movehl_ps(x, x));
        x = _mm_max_ss(x, _mm_shuffle_ps(x, x, 1));
        return _mm_cvtss_f32(x);
    }
    // (v0, v1, v2, v3, ...) -> (v1, v0, v3, v2, ...): the partner of each gptj rope pair.
    CPU_VFN R swap_pairs(R v) { return _mm256_permute_ps(v, 0xB1); }
    // e^x to about 1 ulp: x = n ln2 + r with |r| <= ln2/2 (ln2 split in two so n ln2 is exact),
    // e^r by its Taylor series to r^7 (truncation below 5e-9), times 2^n built in the exponent.
    // Inputs are clamped to [-87.3, 88.3] so 2^n stays a normal float.
    CPU_VFN R exp(R x) {
        x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.3f)), _mm256_set1_ps(88.3f));
        const R n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        R r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693145751953125f), x);
        r = _mm256_fnmadd_ps(n, _mm256_set1_ps(1.42860682030941723212e-6f), r);
        R p = _mm256_set1_ps(1.0f / 5040.0f);
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
        const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
        return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    }
};

}  // namespace cpu
