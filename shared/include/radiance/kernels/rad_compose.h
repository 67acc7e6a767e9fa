/* rad_compose.h: the fused ops of docs/OPS.md (add_rms_norm, gemm_swiglu, gemm_add,
 * rms_norm_gemm, rms_norm_gemm_swiglu, rope_attention) served by a library's
 * own unfused rows run one after the other on the same queue. The bytes are the chain's by
 * definition, so a library with no faster kernel for a fusion still serves it, and an
 * architecture that plans the fused op runs on every library. Header-only (a plugin links
 * nothing of the engine). */
#ifndef RADIANCE_RAD_COMPOSE_H
#define RADIANCE_RAD_COMPOSE_H

#include "../rad_plugin.h"

/* A part's arguments: the fused op's queue, rank and instance with the part's operands and
 * parameters, no schema, and no scratch unless the caller hands it some. */
static inline RadArgs rad_compose_part(const RadArgs* a, RadTensor* t, int32_t n_t, const RadParam* p, int32_t n_p) {
    RadArgs s = *a;
    s.schema = 0;
    s.t = t;
    s.n_t = n_t;
    s.p = p;
    s.n_p = n_p;
    s.scratch = 0;
    s.scratch_bytes = 0;
    return s;
}

/* add_rms_norm = add (x = x + r) then rms_norm (y = norm(x)). The fused args' parameters (n, dim,
 * eps, unit_offset, wdtype) are what both parts read. */
static inline int rad_compose_add_rms_norm(const RadArgs* a, RadLaunchFn add, RadLaunchFn norm) {
    if (a->n_t < 4) return RAD_E_ARG;
    RadTensor t[3];
    RadArgs s = *a;
    s.schema = 0;
    s.t = t;
    s.n_t = 3;
    t[0] = a->t[0]; /* a */
    t[1] = a->t[1]; /* b */
    t[2] = a->t[0]; /* y: the residual, in place */
    int rc = add(&s);
    if (rc != RAD_OK) return rc;
    t[0] = a->t[0]; /* x */
    t[1] = a->t[2]; /* w */
    t[2] = a->t[3]; /* y */
    return norm(&s);
}

/* Scratch for gemm_swiglu composed: the [M, 2N] product (then whatever the gemm row's own scratch
 * hook asks, for a caller composing rows that take scratch). */
static inline uint64_t rad_compose_gemm_swiglu_scratch(const RadArgs* geom) {
    return (uint64_t)rad_args_geti(geom, "M") * (uint64_t)rad_args_geti(geom, "N") * 2u * 4u;
}

/* gemm_swiglu = gemm into the scratch's first M * 2N floats, then swiglu into y. */
static inline int rad_compose_gemm_swiglu(const RadArgs* a, RadLaunchFn gemm, RadLaunchFn swiglu) {
    if (a->n_t < 3) return RAD_E_ARG;
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N"), K = rad_args_geti(a, "K");
    if (!a->scratch || a->scratch_bytes < (uint64_t)M * (uint64_t)N * 8u) return RAD_E_NOMEM;
    RadTensor gu = a->t[2];
    gu.data = a->scratch;
    gu.rank = 2;
    gu.shape[0] = M;
    gu.shape[1] = 2 * N;
    gu.row_pitch = 2 * N * 4;
    RadTensor t[4];
    t[0] = a->t[0];
    t[1] = a->t[1];
    t[2] = a->t[1];
    t[2].data = 0; /* no bias */
    t[3] = gu;
    RadParam gp[4];
    memset(gp, 0, sizeof gp);
    gp[0].name = "M", gp[0].type = RAD_P_INT, gp[0].i = M;
    gp[1].name = "N", gp[1].type = RAD_P_INT, gp[1].i = 2 * N;
    gp[2].name = "K", gp[2].type = RAD_P_INT, gp[2].i = K;
    gp[3].name = "wdtype", gp[3].type = RAD_P_STR, gp[3].s = rad_args_gets_or(a, "wdtype", "bf16");
    RadArgs s = rad_compose_part(a, t, 4, gp, 4);
    /* the product first; the rest of the scratch is the gemm row's own */
    const uint64_t product = (uint64_t)M * (uint64_t)N * 8u;
    s.scratch = a->scratch_bytes > product ? (void*)((char*)a->scratch + product) : 0;
    s.scratch_bytes = a->scratch_bytes > product ? a->scratch_bytes - product : 0;
    int rc = gemm(&s);
    if (rc != RAD_OK) return rc;
    RadParam sp[2];
    memset(sp, 0, sizeof sp);
    sp[0].name = "n", sp[0].type = RAD_P_INT, sp[0].i = M;
    sp[1].name = "dim", sp[1].type = RAD_P_INT, sp[1].i = N;
    t[0] = gu;
    t[1] = a->t[2];
    s.n_t = 2;
    s.p = sp;
    s.n_p = 2;
    return swiglu(&s);
}

/* An int or string parameter for a part's arguments. */
static inline void rad_compose_int(RadParam* p, const char* name, int64_t v) {
    memset(p, 0, sizeof *p);
    p->name = name, p->type = RAD_P_INT, p->i = v;
}

/* A row-major [rows, cols] f32 view of the scratch at `at`. */
static inline RadTensor rad_compose_rows(const RadTensor* like, void* at, int64_t rows, int64_t cols) {
    RadTensor t = *like;
    t.data = at;
    t.dtype = RAD_F32;
    t.rank = 2;
    t.shape[0] = rows;
    t.shape[1] = cols;
    t.row_pitch = cols * 4;
    return t;
}

/* Scratch for gemm_add composed: the [M, N] product (then the gemm row's own). */
static inline uint64_t rad_compose_gemm_add_scratch(const RadArgs* geom) {
    return (uint64_t)rad_args_geti(geom, "M") * (uint64_t)rad_args_geti(geom, "N") * 4u;
}

/* gemm_add = gemm (with the bias) into the scratch's first M * N floats, then add: y = y + product. */
static inline int rad_compose_gemm_add(const RadArgs* a, RadLaunchFn gemm, RadLaunchFn add) {
    if (a->n_t < 4) return RAD_E_ARG;
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N");
    const uint64_t product = (uint64_t)M * (uint64_t)N * 4u;
    if (!a->scratch || a->scratch_bytes < product) return RAD_E_NOMEM;
    RadTensor t[4];
    t[0] = a->t[0];
    t[1] = a->t[1];
    t[2] = a->t[2];
    t[3] = rad_compose_rows(&a->t[3], a->scratch, M, N);
    RadArgs s = *a;
    s.schema = 0;
    s.t = t;
    s.n_t = 4;
    s.scratch = a->scratch_bytes > product ? (void*)((char*)a->scratch + product) : 0;
    s.scratch_bytes = a->scratch_bytes > product ? a->scratch_bytes - product : 0;
    int rc = gemm(&s); /* the fused op's own parameters are gemm's (M, N, K, wdtype) */
    if (rc != RAD_OK) return rc;
    RadParam ap[2];
    rad_compose_int(&ap[0], "n", M);
    rad_compose_int(&ap[1], "dim", N);
    t[1] = t[3];    /* b: the product */
    t[0] = a->t[3]; /* a: y */
    t[2] = a->t[3]; /* y, in place */
    s.n_t = 3;
    s.p = ap;
    s.n_p = 2;
    s.scratch = 0;
    s.scratch_bytes = 0;
    return add(&s);
}

/* Scratch for rms_norm_gemm composed: the [M, K] normed rows (then the gemm row's own); for
 * rms_norm_gemm_swiglu also gemm_swiglu's composed product after them. */
static inline uint64_t rad_compose_rms_norm_gemm_scratch(const RadArgs* geom) {
    return (uint64_t)rad_args_geti(geom, "M") * (uint64_t)rad_args_geti(geom, "K") * 4u;
}
static inline uint64_t rad_compose_rms_norm_gemm_swiglu_scratch(const RadArgs* geom) {
    return rad_compose_rms_norm_gemm_scratch(geom) + rad_compose_gemm_swiglu_scratch(geom);
}

/* rms_norm_gemm = rms_norm (n = M, dim = K, the norm weight nw) into the scratch's first M * K
 * floats, then gemm (with the bias) from them into y; rms_norm_gemm_swiglu (with_bias 0) the same
 * with gemm_swiglu, the rest of the scratch being the second part's. */
static inline int rad_compose_rms_norm_then(const RadArgs* a, RadLaunchFn norm, RadLaunchFn next, int with_bias) {
    if (a->n_t < (with_bias ? 5 : 4)) return RAD_E_ARG;
    const int64_t M = rad_args_geti(a, "M"), K = rad_args_geti(a, "K");
    const uint64_t rows = (uint64_t)M * (uint64_t)K * 4u;
    if (!a->scratch || a->scratch_bytes < rows) return RAD_E_NOMEM;
    const RadTensor h = rad_compose_rows(&a->t[0], a->scratch, M, K);
    RadParam np[5];
    int n_np = 0;
    rad_compose_int(&np[n_np++], "n", M);
    rad_compose_int(&np[n_np++], "dim", K);
    memset(&np[n_np], 0, sizeof np[n_np]);
    np[n_np].name = "eps", np[n_np].type = RAD_P_F64, np[n_np].f = rad_args_getf(a, "eps"), ++n_np;
    if (rad_args_geti_or(a, "unit_offset", 0)) rad_compose_int(&np[n_np++], "unit_offset", 1);
    memset(&np[n_np], 0, sizeof np[n_np]);
    np[n_np].name = "wdtype", np[n_np].type = RAD_P_STR, np[n_np].s = rad_args_gets_or(a, "wdtype", "bf16"), ++n_np;
    RadTensor t[4];
    t[0] = a->t[0];
    t[1] = a->t[1];
    t[2] = h;
    RadArgs s = *a;
    s.schema = 0;
    s.t = t;
    s.n_t = 3;
    s.p = np;
    s.n_p = n_np;
    s.scratch = 0;
    s.scratch_bytes = 0;
    int rc = norm(&s);
    if (rc != RAD_OK) return rc;
    RadParam gp[4];
    rad_compose_int(&gp[0], "M", M);
    rad_compose_int(&gp[1], "N", rad_args_geti(a, "N"));
    rad_compose_int(&gp[2], "K", K);
    memset(&gp[3], 0, sizeof gp[3]);
    gp[3].name = "wdtype", gp[3].type = RAD_P_STR, gp[3].s = rad_args_gets_or(a, "wdtype", "bf16");
    t[0] = h;
    t[1] = a->t[2];
    if (with_bias) {
        t[2] = a->t[3];
        t[3] = a->t[4];
    } else {
        t[2] = a->t[3];
    }
    s.n_t = with_bias ? 4 : 3;
    s.p = gp;
    s.n_p = 4;
    s.scratch = a->scratch_bytes > rows ? (void*)((char*)a->scratch + rows) : 0;
    s.scratch_bytes = a->scratch_bytes > rows ? a->scratch_bytes - rows : 0;
    return next(&s);
}
static inline int rad_compose_rms_norm_gemm(const RadArgs* a, RadLaunchFn norm, RadLaunchFn gemm) {
    return rad_compose_rms_norm_then(a, norm, gemm, 1);
}
static inline int rad_compose_rms_norm_gemm_swiglu(const RadArgs* a, RadLaunchFn norm, RadLaunchFn gemm_swiglu) {
    return rad_compose_rms_norm_then(a, norm, gemm_swiglu, 0);
}

/* rope_attention = rope on q (n_head heads), rope on k (n_head_kv heads), both in place with the
 * op's rope parameters, then attention with the op's own arguments (its scratch is attention's). */
#define RAD_COMPOSE_MAX_PARAMS 32
static inline int rad_compose_rope_attention(const RadArgs* a, RadLaunchFn rope, RadLaunchFn attention) {
    if (a->n_t < 9 || a->n_p > RAD_COMPOSE_MAX_PARAMS) return RAD_E_ARG;
    RadParam rp[RAD_COMPOSE_MAX_PARAMS];
    int32_t heads_at = -1;
    for (int32_t i = 0; i < a->n_p; ++i) {
        rp[i] = a->p[i];
        if (strcmp(a->p[i].name, "n_head") == 0) heads_at = i;
    }
    if (heads_at < 0) return RAD_E_ARG;
    RadTensor t[3];
    RadArgs s = rad_compose_part(a, t, 3, rp, a->n_p);
    t[0] = a->t[0]; /* q */
    t[1] = a->t[5]; /* pos */
    t[2] = a->t[6]; /* cu_seqlens: each row's sequence, for longrope's choice */
    int rc = rope(&s);
    if (rc != RAD_OK) return rc;
    rp[heads_at].i = rad_args_geti(a, "n_head_kv");
    t[0] = a->t[1]; /* k */
    rc = rope(&s);
    if (rc != RAD_OK) return rc;
    s = rad_compose_part(a, a->t, a->n_t, a->p, a->n_p);
    s.scratch = a->scratch; /* attention's */
    s.scratch_bytes = a->scratch_bytes;
    return attention(&s);
}

#endif
