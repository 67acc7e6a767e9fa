/* rad_kv_fp8.h: the fp8 KV cache's quantisation (docs/OPS.md, `attention`), header-only so that
 * every library that writes or reads an fp8 cache (libref, libcpu, a card's) stores and reads the
 * same bits.
 *
 * One scale per (token, kv head), f32, made when the row is written and kept in the KV group's
 * scale planes beside the codes:
 *
 *   s    = amax(|x|) / 448       over that head's head_dim values; 1 when they are all zero
 *   code = e4m3(x / s)           OCP e4m3fn, round to nearest even, saturating at +-448
 *   x'   = f32(code) * s         what attention reads back
 *
 * A scale made from the row itself needs no calibration and keeps any model's keys in range; it
 * costs 4 bytes a head of 128 values (3%). The quotient and the product are single f32 operations
 * (no FMA can contract them), so every reader dequantises to the same bits. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_RAD_KV_FP8_H
#define RADIANCE_RAD_KV_FP8_H

#include <float.h>
#include <math.h>

#include "rad_decode.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The largest finite e4m3fn value: a row's largest magnitude maps onto it. */
#define RAD_KV_FP8_MAX 448.0f

/* The scale of n values. Infinities and NaN do not count towards the maximum (an infinity
 * saturates to +-448 s, a NaN stays NaN: a model that makes one is broken, and the cache does not
 * hide it). A row so small that amax / 448 is below the smallest normal f32 takes that smallest
 * normal instead (its quotients stay finite; such a row is zero to attention either way). */
static inline float rad_kv_fp8_scale(const float* x, int64_t n) {
    float amax = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        const float a = fabsf(x[i]);
        if (a > amax && a <= FLT_MAX) amax = a; /* NaN compares false; +inf is above FLT_MAX */
    }
    if (amax == 0.0f) return 1.0f;
    const float s = amax / RAD_KV_FP8_MAX;
    return s < FLT_MIN ? FLT_MIN : s;
}

/* Quantises n values into `codes` and returns their scale. */
static inline float rad_kv_fp8_store(const float* x, int64_t n, uint8_t* codes) {
    const float s = rad_kv_fp8_scale(x, n);
    for (int64_t i = 0; i < n; ++i) {
        const float q = x[i] / s; /* a division, not a product with 1/s: the definition's bits */
        codes[i] = rad_f32_to_fp8_e4m3(q);
    }
    return s;
}

/* One cached value as attention reads it. */
static inline float rad_kv_fp8_load(uint8_t code, float scale) {
    const float c = rad_fp8_e4m3_to_f32(code);
    return c * scale;
}

/* Whether a cache of this dtype is read through scales (docs/ARCHITECTURE.md, "KV planes"):
 * its group then has a K and a V scale plane beside the codes. */
static inline int rad_kv_has_scales(int dtype) { return dtype == RAD_FP8_E4M3 || dtype == RAD_FP8_E5M2; }

#ifdef __cplusplus
}
#endif

#endif
