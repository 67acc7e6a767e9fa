/* rad_decode.h: the core's decoder of the `plain` and `affine` schemes, header-only so that the
 * converter's error report, rad-kbench's oracle path and libref (which links nothing of the
 * engine) decode with the same code.
 *
 *   plain:   w = code                                    one TILED plane "codes", block [1x1]
 *   affine:  q = code                                    "codes" TILED [1x1] (ints, fp8, fp4, floats)
 *            q = q - zero                                "zero" TILED, optional
 *            v = q * scale * scale.1 * ...               every scale level, in level order
 *            v = v - min * min.1 * ...                   optional
 *   perm:    w[perm[j]] = v[j]                           transform "perm", a TABLE "t.perm" (i32,
 *                                                        1 x cols): stored column j is the weight's
 *                                                        column perm[j] (GPTQ act-order)
 *
 * Each step rounds to f32 in that order (no FMA: the products are separate statements), so every
 * reader decodes to the same bits; the permutation only moves values. A scheme or transform of a
 * quantiser's own (grids, signs, rotations) is that quantiser's `decode` hook's business:
 * rad_decode_rows answers RAD_E_UNSUPPORTED.
 *
 * Also here: element access to a plane of any dtype (sub-byte ones are a bit stream along the
 * row, lowest bits first, every row starting on a byte) and OCP fp8 conversions. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_RAD_DECODE_H
#define RADIANCE_RAD_DECODE_H

#include "rad_plugin.h"

#include <stdlib.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- fp8 and fp4 ------------------------------------------------------------------------- */

/* OCP e4m3fn: bias 7, no infinities, S.1111.111 is NaN, largest finite 448. */
static inline float rad_fp8_e4m3_to_f32(uint8_t b) {
    const uint32_t e = (b >> 3) & 0xfu, m = b & 7u;
    float v;
    if (e == 15 && m == 7) return NAN;
    if (e == 0)
        v = (float)m * (1.0f / 512.0f); /* m * 2^-9 */
    else
        v = rad_bits_f32(((e + 120u) << 23) | (m << 20));
    return (b & 0x80u) ? -v : v;
}

/* Round to nearest even, saturating to +-448 (an out-of-range value becomes the largest finite,
 * as a quantiser that clamps wants); NaN stays NaN. */
static inline uint8_t rad_f32_to_fp8_e4m3(float f) {
    const uint32_t u = rad_f32_bits(f), sign = (u >> 24) & 0x80u, a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return (uint8_t)(sign | 0x7fu);
    if (a < 0x3c800000u) { /* below 2^-6: a subnormal of e4m3, m * 2^-9 */
        const float v = rad_bits_f32(a) * 512.0f;
        uint32_t m = (uint32_t)v;
        const float rem = v - (float)m;
        if (rem > 0.5f || (rem == 0.5f && (m & 1u))) ++m;
        return (uint8_t)(sign | m); /* m = 8 is 2^-6, the first normal: the bits agree */
    }
    const uint32_t r = (a + 0x7ffffu + ((a >> 20) & 1u)) >> 20; /* 3 mantissa bits kept, rounded */
    const uint32_t code = r - (120u << 3);                      /* exponent bias 127 -> 7 */
    return (uint8_t)(sign | (code > 0x7eu ? 0x7eu : code));
}

/* e5m2: bias 15, with infinities (an f16 with the low byte dropped). */
static inline float rad_fp8_e5m2_to_f32(uint8_t b) { return rad_f16_to_f32((uint16_t)((uint16_t)b << 8)); }

/* e2m1 (OCP fp4): 0, 0.5, 1, 1.5, 2, 3, 4, 6 and their negatives. */
static inline float rad_fp4_e2m1_to_f32(uint8_t c) {
    static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    return (c & 8u) ? -mag[c & 7u] : mag[c & 7u];
}

/* The dtype rad_dtype_name names (an op's `qtype`, `sdtype`), or RAD_DT_NONE. */
static inline int rad_dtype_from_name(const char* name) {
    int dt;
    if (!name) return RAD_DT_NONE;
    for (dt = 1; dt < RAD_DT_COUNT; ++dt)
        if (strcmp(rad_dtype_name(dt), name) == 0) return dt;
    return RAD_DT_NONE;
}

/* ---- plane elements ---------------------------------------------------------------------- */

/* The raw bits of element j of a plane row (sub-byte elements: the bit stream, lowest first). */
static inline uint32_t rad_plane_bits(int dt, const uint8_t* row, int64_t j) {
    const int bits = rad_dtype_bits(dt);
    if (bits >= 8) {
        uint32_t v = 0;
        memcpy(&v, row + j * (bits / 8), bits >= 32 ? 4 : (size_t)(bits / 8));
        return v;
    }
    const uint64_t off = (uint64_t)j * (uint64_t)bits;
    const uint32_t shift = (uint32_t)(off & 7u);
    uint32_t w = row[off >> 3];
    if (shift + (uint32_t)bits > 8) w |= (uint32_t)row[(off >> 3) + 1] << 8;
    return (w >> shift) & ((1u << bits) - 1u);
}

/* Element j of a plane row as f32: floats widened exactly, integers as their value, fp8/fp4 as
 * their OCP value. NaN for a dtype that has no value (64-bit ints). */
static inline float rad_plane_load(int dt, const uint8_t* row, int64_t j) {
    switch (dt) {
    case RAD_F32:
    case RAD_F16:
    case RAD_BF16:
    case RAD_F64:
    case RAD_I32:
    case RAD_I8:
    case RAD_U8: return rad_load_f32(dt, row, j);
    case RAD_I16: {
        int16_t v;
        memcpy(&v, row + 2 * j, 2);
        return (float)v;
    }
    case RAD_U32: {
        uint32_t v;
        memcpy(&v, row + 4 * j, 4);
        return (float)v;
    }
    case RAD_FP8_E4M3: return rad_fp8_e4m3_to_f32(row[j]);
    case RAD_FP8_E5M2: return rad_fp8_e5m2_to_f32(row[j]);
    case RAD_FP4_E2M1: return rad_fp4_e2m1_to_f32((uint8_t)rad_plane_bits(dt, row, j));
    case RAD_I4: {
        const int32_t v = (int32_t)rad_plane_bits(dt, row, j);
        return (float)(v >= 8 ? v - 16 : v); /* two's complement nibble */
    }
    case RAD_U6:
    case RAD_U4:
    case RAD_U2:
    case RAD_U1: return (float)rad_plane_bits(dt, row, j);
    default: return NAN;
    }
}

/* Writes the raw bits of element j of a plane row (sub-byte: only that element's bits change). */
static inline void rad_plane_store_bits(int dt, uint8_t* row, int64_t j, uint32_t v) {
    const int bits = rad_dtype_bits(dt);
    if (bits >= 8) {
        memcpy(row + j * (bits / 8), &v, bits >= 32 ? 4 : (size_t)(bits / 8));
        return;
    }
    const uint64_t off = (uint64_t)j * (uint64_t)bits;
    const uint32_t shift = (uint32_t)(off & 7u), mask = (1u << bits) - 1u;
    const uint32_t w = (v & mask) << shift, keep = ~(mask << shift);
    row[off >> 3] = (uint8_t)((row[off >> 3] & keep) | w);
    if (shift + (uint32_t)bits > 8) row[(off >> 3) + 1] = (uint8_t)((row[(off >> 3) + 1] & (keep >> 8)) | (w >> 8));
}

/* ---- building encodings ------------------------------------------------------------------ */

/* Appends a TILED plane of `dtype` whose element covers [block_r x block_c] (0 = the whole
 * extent); RAD_E_ARG when the encoding is full. */
static inline int rad_encoding_add_tiled(RadEncoding* e, const char* role, int dtype, int64_t block_r, int64_t block_c) {
    RadPlaneDesc* p;
    if (e->n_planes < 0 || e->n_planes >= RAD_MAX_PLANES) return RAD_E_ARG;
    p = &e->planes[e->n_planes++];
    memset(p, 0, sizeof *p);
    strncpy(p->role, role, RAD_ENC_NAME - 1);
    p->kind = RAD_PLANE_TILED;
    p->dtype = dtype;
    p->block_r = block_r;
    p->block_c = block_c;
    return RAD_OK;
}

/* Gives an encoding the perm transform: its table "t.perm", i32 [1 x cols] (rad_perm_plane's
 * form); RAD_E_ARG when the encoding is full or already has a transform. */
static inline int rad_encoding_add_perm(RadEncoding* e, int64_t cols) {
    RadPlaneDesc* p;
    if (e->n_planes < 0 || e->n_planes >= RAD_MAX_PLANES || e->transform[0] != 0) return RAD_E_ARG;
    strncpy(e->transform, "perm", RAD_ENC_NAME - 1);
    p = &e->planes[e->n_planes++];
    memset(p, 0, sizeof *p);
    strncpy(p->role, "t.perm", RAD_ENC_NAME - 1);
    p->kind = RAD_PLANE_TABLE;
    p->dtype = RAD_I32;
    p->rows = 1;
    p->cols = cols;
    return RAD_OK;
}

/* The affine encoding's start: codes of `code_dtype`, one a value; add "zero", "scale", ... */
static inline RadEncoding rad_encoding_affine(int code_dtype) {
    RadEncoding e;
    memset(&e, 0, sizeof e);
    strncpy(e.scheme, "affine", RAD_ENC_NAME - 1);
    e.vec = 1;
    rad_encoding_add_tiled(&e, "codes", code_dtype, 1, 1);
    return e;
}

/* ---- decoding ---------------------------------------------------------------------------- */

/* Whether a TILED plane's role is `base` ("scale") or one of its levels ("scale.1"), and which. */
static inline int rad_role_level(const char* role, const char* base) {
    const size_t n = strlen(base);
    if (strncmp(role, base, n) != 0) return -1;
    if (role[n] == 0) return 0;
    if (role[n] == '.' && role[n + 1] >= '1' && role[n + 1] <= '7' && role[n + 2] == 0) return role[n + 1] - '0';
    return -1;
}

/* ---- the perm transform ------------------------------------------------------------------ */

/* Value j of a t.perm table (little-endian i32, read from any address: the table lies in a mapping). */
static inline int32_t rad_perm_at(const void* perm, int64_t j) {
    int32_t v;
    memcpy(&v, (const uint8_t*)perm + 4 * j, 4);
    return v;
}

/* Whether a t.perm table of n values holds each of 0..n-1 exactly once (a column read twice and
 * another never would decode, and gemm_q would compute, a different weight): RAD_OK,
 * RAD_E_FORMAT, or RAD_E_NOMEM. */
static inline int rad_perm_check(const void* perm, int64_t n) {
    uint8_t* seen;
    int64_t j;
    int rc = RAD_OK;
    if (n < 0) return RAD_E_FORMAT;
    seen = (uint8_t*)calloc((size_t)(n / 8 + 1), 1);
    if (!seen) return RAD_E_NOMEM;
    for (j = 0; j < n && rc == RAD_OK; ++j) {
        const int32_t p = rad_perm_at(perm, j);
        if (p < 0 || p >= n || (seen[p >> 3] >> (p & 7)) & 1)
            rc = RAD_E_FORMAT;
        else
            seen[p >> 3] |= (uint8_t)(1u << (p & 7));
    }
    free(seen);
    return rc;
}

/* ---- rows -------------------------------------------------------------------------------- */

/* Decodes rows [r0, r0 + n_rows) of a [rows x cols] weight stored in `enc` into out
 * (n_rows * cols f32, row-major). planes[k] is plane k's first byte (row 0 of the whole plane;
 * a table whole). Under the perm transform each row is scattered, out[perm[j]] = v[j], once the
 * table is checked (rad_perm_check). RAD_OK; RAD_E_UNSUPPORTED for a scheme, transform or role
 * the core does not decode (a quantiser's own: its decode hook's); RAD_E_FORMAT for a malformed
 * encoding or permutation. */
static inline int rad_decode_rows(const RadEncoding* enc, int64_t rows, int64_t cols, int64_t r0, int64_t n_rows, const void* const* planes,
                                  float* out) {
    int level, perm = -1, rc;
    int codes = -1, zero = -1, scale[8], mins[8];
    int64_t prows[RAD_MAX_PLANES], pcols[RAD_MAX_PLANES], br[RAD_MAX_PLANES], bc[RAD_MAX_PLANES];
    uint64_t pitch[RAD_MAX_PLANES];
    int k, n_scale = 0, n_min = 0;
    int64_t i, j;
    const int plain = strncmp(enc->scheme, "plain", RAD_ENC_NAME) == 0;
    if (!plain && strncmp(enc->scheme, "affine", RAD_ENC_NAME) != 0) return RAD_E_UNSUPPORTED;
    if (enc->n_planes < 1 || enc->n_planes > RAD_MAX_PLANES || enc->vec != 1) return RAD_E_FORMAT;
    if (r0 < 0 || n_rows < 0 || r0 + n_rows > rows || cols < 0) return RAD_E_SHAPE;
    if ((rc = rad_perm_plane(enc, cols, &perm)) != RAD_OK) return rc;
    if (perm >= 0) {
        if (plain) return RAD_E_FORMAT; /* plain is one plane */
        if ((rc = rad_perm_check(planes[perm], cols)) != RAD_OK) return rc;
    }
    for (k = 0; k < 8; ++k) scale[k] = mins[k] = -1;
    for (k = 0; k < enc->n_planes; ++k) {
        const RadPlaneDesc* p = &enc->planes[k];
        if (k == perm) continue;
        if (p->kind != RAD_PLANE_TILED) return RAD_E_UNSUPPORTED; /* other tables belong to a scheme of its own */
        if (rad_dtype_bits(p->dtype) == 0 || rad_plane_extent(p, rows, cols, &prows[k], &pcols[k]) != RAD_OK) return RAD_E_FORMAT;
        br[k] = p->block_r ? p->block_r : (rows > 0 ? rows : 1);
        bc[k] = p->block_c ? p->block_c : (cols > 0 ? cols : 1);
        pitch[k] = rad_row_bytes(p->dtype, (uint64_t)pcols[k]);
        if (strncmp(p->role, "codes", RAD_ENC_NAME) == 0) {
            if (codes >= 0 || p->block_r != 1 || p->block_c != 1) return RAD_E_FORMAT;
            codes = k;
        } else if (plain) {
            return RAD_E_FORMAT; /* plain is one plane */
        } else if (strncmp(p->role, "zero", RAD_ENC_NAME) == 0) {
            if (zero >= 0) return RAD_E_FORMAT;
            zero = k;
        } else if ((level = rad_role_level(p->role, "scale")) >= 0) {
            if (scale[level] >= 0) return RAD_E_FORMAT;
            scale[level] = k;
            ++n_scale;
        } else if ((level = rad_role_level(p->role, "min")) >= 0) {
            if (mins[level] >= 0) return RAD_E_FORMAT;
            mins[level] = k;
            ++n_min;
        } else {
            return RAD_E_UNSUPPORTED; /* signs, grids, ...: not the affine scheme */
        }
    }
    if (codes < 0) return RAD_E_FORMAT;
    for (k = 0; k < n_scale; ++k)
        if (scale[k] < 0) return RAD_E_FORMAT; /* levels are 0..n-1 without gaps */
    for (k = 0; k < n_min; ++k)
        if (mins[k] < 0) return RAD_E_FORMAT;
    for (i = 0; i < n_rows; ++i) {
        const int64_t r = r0 + i;
        const uint8_t* crow = (const uint8_t*)planes[codes] + (uint64_t)r * pitch[codes];
        float* o = out + i * cols;
        for (j = 0; j < cols; ++j) {
            float q = rad_plane_load(enc->planes[codes].dtype, crow, j);
            float m = 0.0f;
#define RAD_DEC_AT(kk) rad_plane_load(enc->planes[kk].dtype, (const uint8_t*)planes[kk] + (uint64_t)(r / br[kk]) * pitch[kk], j / bc[kk])
            if (zero >= 0) q = q - RAD_DEC_AT(zero);
            for (k = 0; k < n_scale; ++k) q = q * RAD_DEC_AT(scale[k]);
            if (n_min > 0) {
                m = RAD_DEC_AT(mins[0]);
                for (k = 1; k < n_min; ++k) m = m * RAD_DEC_AT(mins[k]);
                q = q - m;
            }
#undef RAD_DEC_AT
            o[perm >= 0 ? rad_perm_at(planes[perm], j) : j] = q;
        }
    }
    return RAD_OK;
}

#ifdef __cplusplus
}
#endif
#endif
