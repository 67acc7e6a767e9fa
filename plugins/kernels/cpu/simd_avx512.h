// simd_avx512.h: the 16-lane f32 vector the kernel bodies compile against for level 2
// (AVX-512 F/BW/VL). Every function carries the target attribute; nothing here may be called
// from code compiled for another level.
#pragma once
#include <immintrin.h>

#include <cstdint>

#define CPU_AVX512_ISA "avx512f,avx512bw,avx512vl,avx2,fma,f16c"
#define CPU_TARGET __attribute__((target(CPU_AVX512_ISA)))
#define CPU_VFN static inline __attribute__((always_inline, target(CPU_AVX512_ISA)))

namespace cpu {

struct VAvx512 {
    using R = __m512;
    static constexpr int W = 16;
    CPU_VFN R zero() { return _mm512_setzero_ps(); }
    CPU_VFN R set1(float v) { return _mm512_set1_ps(v); }
    CPU_VFN R load(const float* p) { return _mm512_loadu_ps(p); }
    CPU_VFN void store(float* p, R v) { _mm512_storeu_ps(p, v); }
    // bf16 is the top half of an f32: widen the 16-bit lanes to 32 and shift them up.
    CPU_VFN R load_bf16(const uint16_t* p) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
        return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    CPU_VFN R load_f16(const uint16_t* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
    // Quantised codes (body_gemm_q.inc): W int32 codes a vector, converted exactly to f32.
    using I = __m512i;
    CPU_VFN I iset1(int32_t v) { return _mm512_set1_epi32(v); }
    CPU_VFN I isub(I a, I b) { return _mm512_sub_epi32(a, b); }
    CPU_VFN I ixor(I a, I b) { return _mm512_xor_si512(a, b); }
    CPU_VFN R cvt(I v) { return _mm512_cvtepi32_ps(v); }
    CPU_VFN I load_i8(const uint8_t* row, int64_t k) { return _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k))); }
    CPU_VFN I load_u8(const uint8_t* row, int64_t k) { return _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k))); }
    // Codes k .. k + 2W of a 4-bit row from its W bytes at k / 2: the low nibbles (codes k, k + 2,
    // ...) and the high ones (k + 1, k + 3, ...), each W lanes; x is read in the same order.
    CPU_VFN void load_nibbles(const uint8_t* row, int64_t k, I& lo, I& hi) {
        const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k / 2)), m = _mm_set1_epi8(15);
        lo = _mm512_cvtepu8_epi32(_mm_and_si128(b, m));
        hi = _mm512_cvtepu8_epi32(_mm_and_si128(_mm_srli_epi16(b, 4), m));
    }
    // e4m3 as the f16 with its bits one place up (sign to bit 15, exponent and mantissa to bits
    // 7-14), which is the value times 2^-8 for normals and subnormals alike: widened, times 256.
    CPU_VFN R load_e4m3(const uint8_t* row, int64_t k) {
        const __m256i b = _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k)));
        const __m256i h = _mm256_or_si256(_mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x80)), 8),
                                          _mm256_slli_epi16(_mm256_and_si256(b, _mm256_set1_epi16(0x7f)), 7));
        return _mm512_mul_ps(_mm512_cvtph_ps(h), _mm512_set1_ps(256.0f));
    }
    CPU_VFN R add(R a, R b) { return _mm512_add_ps(a, b); }
    CPU_VFN R sub(R a, R b) { return _mm512_sub_ps(a, b); }
    CPU_VFN R mul(R a, R b) { return _mm512_mul_ps(a, b); }
    CPU_VFN R div(R a, R b) { return _mm512_div_ps(a, b); }
    CPU_VFN R max(R a, R b) { return _mm512_max_ps(a, b); }
    CPU_VFN R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
    CPU_VFN R fnma(R a, R b, R c) { return _mm512_fnmadd_ps(a, b, c); }
    CPU_VFN R abs(R a) { return _mm512_abs_ps(a); }
    CPU_VFN R copysign(R mag, R sgn) {
        const __m512i s = _mm512_set1_epi32(static_cast<int>(0x80000000u));
        // ternary logic 0xCA is a ? b : c, bit by bit: sgn's sign bit, mag's other bits.
        return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(s, _mm512_castps_si512(sgn), _mm512_castps_si512(mag), 0xCA));
    }
    // The W vectors a[0..16) into one whose lane i is the sum of a[i]'s lanes: pairs of lanes and
    // then 64-bit halves within each 128-bit lane (lane L of v[i] then holds a[4i..4i+4)'s partial
    // sums), then a 4 x 4 transpose-add of the 128-bit lanes.
    CPU_VFN R hsum_rows(const R* a) {
        R u[8], v[4];
        for (int i = 0; i < 8; ++i)
            u[i] = _mm512_add_ps(_mm512_unpacklo_ps(a[2 * i], a[2 * i + 1]), _mm512_unpackhi_ps(a[2 * i], a[2 * i + 1]));
        for (int i = 0; i < 4; ++i) {
            const __m512d x = _mm512_castps_pd(u[2 * i]), y = _mm512_castps_pd(u[2 * i + 1]);
            v[i] = _mm512_add_ps(_mm512_castpd_ps(_mm512_unpacklo_pd(x, y)), _mm512_castpd_ps(_mm512_unpackhi_pd(x, y)));
        }
        const R x01 = _mm512_add_ps(_mm512_shuffle_f32x4(v[0], v[1], 0x88), _mm512_shuffle_f32x4(v[0], v[1], 0xdd));
        const R x23 = _mm512_add_ps(_mm512_shuffle_f32x4(v[2], v[3], 0x88), _mm512_shuffle_f32x4(v[2], v[3], 0xdd));
        return _mm512_add_ps(_mm512_shuffle_f32x4(x01, x23, 0x88), _mm512_shuffle_f32x4(x01, x23, 0xdd));
    }
    CPU_VFN float hsum(R v) {
        __m256 x = _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        __m128 y = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
        y = _mm_add_ps(y, _mm_movehl_ps(y, y));
        y = _mm_add_ss(y, _mm_shuffle_ps(y, y, 1));
        return _mm_cvtss_f32(y);
    }
    CPU_VFN float hmax(R v) {
        __m256 x = _mm256_max_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
        __m128 y = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
        y = _mm_max_ps(y, _mm_movehl_ps(y, y));
        y = _mm_max_ss(y, _mm_shuffle_ps(y, y, 1));
        return _mm_cvtss_f32(y);
    }
    CPU_VFN R swap_pairs(R v) { return _mm512_permute_ps(v, 0xB1); }
    // e^x as VAvx2::exp (see there): Cody-Waite reduction, Taylor to r^7, 2^n in the exponent.
    CPU_VFN R exp(R x) {
        x = _mm512_min_ps(_mm512_max_ps(x, _mm512_set1_ps(-87.3f)), _mm512_set1_ps(88.3f));
        const R n =
            _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        R r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693145751953125f), x);
        r = _mm512_fnmadd_ps(n, _mm512_set1_ps(1.42860682030941723212e-6f), r);
        R p = _mm512_set1_ps(1.0f / 5040.0f);
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
        const __m512i e = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
        return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
    }
};

}  // namespace cpu
