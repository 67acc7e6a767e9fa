/* rad_encoding.h: how a weight's numbers are stored, as data rather than an enum.
 *
 * An encoding is a scheme name, a list of planes by role, and a transform. The core sizes,
 * slices and places any encoding from this struct alone and decodes `plain` and `affine` itself:
 *
 *   q = code                        codes TILED (block [1x1], or [1xV] with a grid)
 *   q = grid[code][k]               grid TABLE [entries x V]
 *   q = -q if the sign bit is set   signs TILED u1
 *   q = q - zero                    zero TILED
 *   v = q * scale * scale.1 ...     every scale level
 *   v = v - min * min.1 ...         a minimum in the value's domain
 *   w = v . T^-1                    the transform, per row over columns ("perm": w[perm[j]] = v[j],
 *                                   its TABLE "t.perm" i32 [1 x cols]; rad_decode.h decodes it)
 *
 * Fixed-size character fields keep the struct self-contained, so it is stored in a container
 * byte for byte and crosses the plugin boundary without ownership questions. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_RAD_ENCODING_H
#define RADIANCE_RAD_ENCODING_H

#include "rad_types.h"
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum RadPlaneKind {
    RAD_PLANE_TILED = 1, /* covers the weight: element (i,j) covers a [block_r, block_c] block */
    RAD_PLANE_TABLE = 2  /* a codebook, grid or transform parameter; every slice carries it whole */
} RadPlaneKind;

#define RAD_MAX_PLANES 8
#define RAD_ENC_NAME 24

typedef struct RadPlaneDesc {
    char role[RAD_ENC_NAME]; /* "codes", "scale", "scale.1", "zero", "min", "grid", "signs", "t.perm" */
    int32_t kind;            /* RadPlaneKind */
    int32_t dtype;           /* RadDType of one element */
    int64_t block_r;         /* TILED: rows one element covers; 0 = the whole extent */
    int64_t block_c;         /* TILED: columns one element covers; 0 = the whole extent */
    int64_t rows;            /* TABLE: its own extent (ignored for TILED) */
    int64_t cols;
} RadPlaneDesc;

typedef struct RadEncoding {
    char scheme[RAD_ENC_NAME];    /* "plain", "affine", or a quantiser's own */
    char transform[RAD_ENC_NAME]; /* "", "fwhtN", "perm", "givens" */
    int32_t n_planes;
    int32_t vec; /* values one code covers (a grid's V); 1 otherwise */
    RadPlaneDesc planes[RAD_MAX_PLANES];
} RadEncoding;

/* The plain encoding of a dense weight of one dtype: a single TILED plane "codes" of [1x1]. */
static inline RadEncoding rad_encoding_plain(int dtype) {
    RadEncoding e;
    memset(&e, 0, sizeof e);
    strncpy(e.scheme, "plain", RAD_ENC_NAME - 1);
    e.n_planes = 1;
    e.vec = 1;
    strncpy(e.planes[0].role, "codes", RAD_ENC_NAME - 1);
    e.planes[0].kind = RAD_PLANE_TILED;
    e.planes[0].dtype = dtype;
    e.planes[0].block_r = 1;
    e.planes[0].block_c = 1;
    return e;
}

/* Extent of plane `p` of an encoding for a weight of [rows x cols] (rank-1 weights: rows = 1).
 * Returns 0 on success, RAD_E_FORMAT for a malformed plane. */
static inline int rad_plane_extent(const RadPlaneDesc* p, int64_t rows, int64_t cols, int64_t* out_rows, int64_t* out_cols) {
    if (p->kind == RAD_PLANE_TABLE) {
        if (p->rows < 0 || p->cols < 0) return RAD_E_FORMAT;
        *out_rows = p->rows;
        *out_cols = p->cols;
        return RAD_OK;
    }
    if (p->kind != RAD_PLANE_TILED || p->block_r < 0 || p->block_c < 0) return RAD_E_FORMAT;
    int64_t br = p->block_r ? p->block_r : rows;
    int64_t bc = p->block_c ? p->block_c : cols;
    if (br <= 0 || bc <= 0) {
        *out_rows = 0;
        *out_cols = 0;
        return RAD_OK;
    }
    *out_rows = (rows + br - 1) / br;
    *out_cols = (cols + bc - 1) / bc;
    return RAD_OK;
}

/* Bytes a plane occupies: rows of ceil(cols*bits/8) bytes each. */
static inline uint64_t rad_plane_bytes(const RadPlaneDesc* p, int64_t rows, int64_t cols) {
    int64_t r = 0, c = 0;
    if (rad_plane_extent(p, rows, cols, &r, &c) != RAD_OK) return 0;
    return (uint64_t)r * rad_row_bytes(p->dtype, (uint64_t)c);
}

/* Index of the plane named `role`, or -1. */
static inline int rad_encoding_plane(const RadEncoding* e, const char* role) {
    for (int i = 0; i < e->n_planes && i < RAD_MAX_PLANES; ++i)
        if (strncmp(e->planes[i].role, role, RAD_ENC_NAME) == 0) return i;
    return -1;
}

/* Where an encoding's permutation is: *index = its t.perm plane, or -1 when the encoding has no
 * transform. RAD_OK; RAD_E_UNSUPPORTED for another transform; RAD_E_FORMAT for a perm transform
 * without its table or with one that is not a TABLE of i32, 1 row and `cols` values (its values:
 * rad_decode.h's rad_perm_check). */
static inline int rad_perm_plane(const RadEncoding* e, int64_t cols, int* index) {
    const RadPlaneDesc* p;
    int k;
    *index = -1;
    if (e->transform[0] == 0) return RAD_OK;
    if (strncmp(e->transform, "perm", RAD_ENC_NAME) != 0) return RAD_E_UNSUPPORTED;
    k = rad_encoding_plane(e, "t.perm");
    if (k < 0) return RAD_E_FORMAT;
    p = &e->planes[k];
    if (p->kind != RAD_PLANE_TABLE || p->dtype != RAD_I32 || p->rows != 1 || p->cols != cols) return RAD_E_FORMAT;
    *index = k;
    return RAD_OK;
}

#ifdef __cplusplus
}
#endif
#endif
