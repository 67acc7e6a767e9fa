/* rad_compose.h: the fused ops of docs/OPS.md (add_rms_norm, gemm_swiglu) served by a library's
 * own unfused rows run one after the other on the same queue. The bytes are the chain's by
 * definition, so a library with no faster kernel for a fusion still serves it, and an
 * architecture that plans the fused op runs on every library. Header-only (a plugin links
 * nothing of the engine). */
#ifndef RADIANCE_RAD_COMPOSE_H
#define RADIANCE_RAD_COMPOSE_H

#include "../rad_plugin.h"

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
    RadArgs s = *a;
    s.schema = 0;
    s.t = t;
    s.n_t = 4;
    s.p = gp;
    s.n_p = 4;
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

#endif
