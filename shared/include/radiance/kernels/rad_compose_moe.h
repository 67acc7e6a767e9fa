/* rad_compose_moe.h: moe_mlp (docs/OPS.md) served by a host library's own gemm and swiglu rows.
 *
 * The rows routed to each expert are gathered, in ascending expert order, into chunks; each chunk
 * goes through gemm with that expert's [gate | up] rows, swiglu, and gemm with its down rows, and
 * each output row, times its routing weight, is added into y. Every token therefore meets its
 * experts in ascending order, as the definition sums them, and an expert's weights are read once
 * per chunk rather than once per token (prefill runs real GEMMs). The routing (ids, w) is read
 * where it lies, so only libraries whose operands are host memory may use it. Header-only C. */
#ifndef RADIANCE_RAD_COMPOSE_MOE_H
#define RADIANCE_RAD_COMPOSE_MOE_H

#include "rad_compose.h"

/* Rows of one expert a chunk takes through the three parts at most. */
#define RAD_COMPOSE_MOE_CHUNK 256

/* The chunk's rows [C, dim], [C, 2 ff], [C, ff] and [C, dim] in f32, then the per-expert offsets
 * (experts + 1) and every (row, slot) pair (n * k) as int32, then the gemm row's own scratch. */
static inline uint64_t rad_compose_moe_mlp_bytes(int64_t n, int64_t dim, int64_t ff, int64_t experts, int64_t k) {
    const int64_t C = n < RAD_COMPOSE_MOE_CHUNK ? n : RAD_COMPOSE_MOE_CHUNK;
    const uint64_t rows = (uint64_t)C * (uint64_t)(2 * dim + 3 * ff) * 4u;
    return rows + (uint64_t)(experts + 1 + n * k) * 4u;
}
static inline uint64_t rad_compose_moe_mlp_scratch(const RadArgs* geom) {
    return rad_compose_moe_mlp_bytes(rad_args_geti(geom, "n"), rad_args_geti(geom, "dim"), rad_args_geti(geom, "ff"),
                                     rad_args_geti(geom, "experts"), rad_args_geti(geom, "k"));
}

/* Rows [row0, row0 + rows) of a dense 2-D weight as a weight of its own. */
static inline RadTensor rad_compose_weight_rows(const RadTensor* w, int64_t row0, int64_t rows) {
    RadTensor v = *w;
    v.data = (char*)w->data + (uint64_t)row0 * (uint64_t)w->shape[1] * (uint64_t)(rad_dtype_bits(w->dtype) / 8);
    v.shape[0] = rows;
    return v;
}

static inline void rad_compose_str(RadParam* p, const char* name, const char* v) {
    memset(p, 0, sizeof *p);
    p->name = name, p->type = RAD_P_STR, p->s = v;
}

static inline int rad_compose_moe_mlp(const RadArgs* a, RadLaunchFn gemm, RadLaunchFn swiglu) {
    if (a->n_t < 6) return RAD_E_ARG;
    const RadTensor *x = &a->t[0], *ids = &a->t[1], *w = &a->t[2], *gu = &a->t[3], *down = &a->t[4];
    RadTensor* y = &a->t[5];
    if (x->dtype != RAD_F32 || ids->dtype != RAD_I32 || w->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), d = rad_args_geti(a, "dim"), F = rad_args_geti(a, "ff"), E = rad_args_geti(a, "experts"),
                  k = rad_args_geti(a, "k");
    if (n <= 0 || d <= 0 || F <= 0 || E <= 0 || k <= 0 || k > E) return RAD_E_ARG;
    if (gu->rank != 2 || gu->shape[0] != E * 2 * F || gu->shape[1] != d) return RAD_E_SHAPE;
    if (down->rank != 2 || down->shape[0] != E * d || down->shape[1] != F) return RAD_E_SHAPE;
    const uint64_t need = rad_compose_moe_mlp_bytes(n, d, F, E, k);
    if (!a->scratch || a->scratch_bytes < need) return RAD_E_NOMEM;
    const int64_t C = n < RAD_COMPOSE_MOE_CHUNK ? n : RAD_COMPOSE_MOE_CHUNK;
    float* xs = (float*)a->scratch;
    float* g = xs + C * d;
    float* act = g + C * 2 * F;
    float* out = act + C * F;
    int32_t* start = (int32_t*)(out + C * d);
    int32_t* pairs = start + E + 1;

    /* a counting sort of the (row, slot) pairs by expert, rows ascending within an expert */
    for (int64_t e = 0; e <= E; ++e) start[e] = 0;
    for (int64_t t = 0; t < n; ++t) {
        const int32_t* id_row = (const int32_t*)((const char*)ids->data + t * rad_tensor_row_pitch(ids));
        for (int64_t j = 0; j < k; ++j) {
            if (id_row[j] < 0 || id_row[j] >= E) return RAD_E_ARG;
            ++start[id_row[j] + 1];
        }
    }
    for (int64_t e = 0; e < E; ++e) start[e + 1] += start[e];
    for (int64_t t = 0; t < n; ++t) {
        const int32_t* id_row = (const int32_t*)((const char*)ids->data + t * rad_tensor_row_pitch(ids));
        for (int64_t j = 0; j < k; ++j) pairs[start[id_row[j]]++] = (int32_t)(t * k + j);
    }
    for (int64_t e = E; e > 0; --e) start[e] = start[e - 1]; /* the fill moved each start to its end */
    start[0] = 0;

    for (int64_t t = 0; t < n; ++t) memset((char*)y->data + t * rad_tensor_row_pitch(y), 0, (size_t)d * 4u);
    const char* wd = rad_args_gets_or(a, "wdtype", "bf16");
    for (int64_t e = 0; e < E; ++e) {
        for (int64_t c0 = start[e]; c0 < start[e + 1]; c0 += C) {
            const int64_t c = start[e + 1] - c0 < C ? start[e + 1] - c0 : C;
            for (int64_t i = 0; i < c; ++i)
                memcpy(xs + i * d, (const char*)x->data + (pairs[c0 + i] / k) * rad_tensor_row_pitch(x), (size_t)d * 4u);
            RadTensor t[4];
            RadParam p[4];
            RadArgs s = rad_compose_part(a, t, 4, p, 4);
            s.scratch = a->scratch_bytes > need ? (void*)((char*)a->scratch + need) : 0;
            s.scratch_bytes = a->scratch_bytes > need ? a->scratch_bytes - need : 0;
            /* [gate | up] of expert e */
            t[0] = rad_compose_rows(x, xs, c, d);
            t[1] = rad_compose_weight_rows(gu, e * 2 * F, 2 * F);
            t[2] = t[1];
            t[2].data = 0; /* no bias */
            t[3] = rad_compose_rows(x, g, c, 2 * F);
            rad_compose_int(&p[0], "M", c);
            rad_compose_int(&p[1], "N", 2 * F);
            rad_compose_int(&p[2], "K", d);
            rad_compose_str(&p[3], "wdtype", wd);
            int rc = gemm(&s);
            if (rc != RAD_OK) return rc;
            /* swiglu */
            RadArgs sa = rad_compose_part(a, t, 2, p, 2);
            t[0] = t[3];
            t[1] = rad_compose_rows(x, act, c, F);
            rad_compose_int(&p[0], "n", c);
            rad_compose_int(&p[1], "dim", F);
            rc = swiglu(&sa);
            if (rc != RAD_OK) return rc;
            /* down of expert e */
            t[0] = t[1];
            t[1] = rad_compose_weight_rows(down, e * d, d);
            t[2] = t[1];
            t[2].data = 0;
            t[3] = rad_compose_rows(x, out, c, d);
            rad_compose_int(&p[0], "M", c);
            rad_compose_int(&p[1], "N", d);
            rad_compose_int(&p[2], "K", F);
            rad_compose_str(&p[3], "wdtype", wd);
            rc = gemm(&s);
            if (rc != RAD_OK) return rc;
            for (int64_t i = 0; i < c; ++i) {
                const int64_t row = pairs[c0 + i] / k, slot = pairs[c0 + i] % k;
                const float weight = ((const float*)((const char*)w->data + row * rad_tensor_row_pitch(w)))[slot];
                float* yr = (float*)((char*)y->data + row * rad_tensor_row_pitch(y));
                for (int64_t q = 0; q < d; ++q) yr[q] += out[i * d + q] * weight;
            }
        }
    }
    return RAD_OK;
}

#endif
