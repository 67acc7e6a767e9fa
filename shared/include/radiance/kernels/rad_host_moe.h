/* rad_host_moe.h: moe_route and gated_add (docs/OPS.md) on the host, header-only so every host
 * kernel library (libref, libcpu) routes the same way: a flipped pick is a different expert, so
 * the libraries must agree bytewise. Callers compile it without FMA contraction
 * (-ffp-contract=off), as libref is built. */
#ifndef RADIANCE_RAD_HOST_MOE_H
#define RADIANCE_RAD_HOST_MOE_H

#include <math.h>

#include "../rad_plugin.h"

/* A logit as routing ranks it: NaN as -inf. */
static inline float rad_host_moe_logit(const float* x, int64_t e) { return x[e] != x[e] ? -INFINITY : x[e]; }

/* exp(logit - max), the softmax's numerator; a row of -inf / NaN alone: every expert alike. */
static inline float rad_host_moe_exp(const float* x, int64_t e, float mx) {
    return mx == -INFINITY ? 1.0f : expf(rad_host_moe_logit(x, e) - mx);
}

/* softmax over each row's expert logits in f32 (max subtracted, the sum in index order), then k
 * rounds each taking the largest (p, -id) below the previous pick: the k largest, equal values to
 * the lower id. */
static inline int rad_host_moe_route(const RadArgs* a) {
    const RadTensor* logits = rad_arg_in(a, 0);
    RadTensor* ids = rad_arg_out(a, 1);
    RadTensor* w = rad_arg_out(a, 2);
    if (!logits || logits->dtype != RAD_F32 || !ids || ids->dtype != RAD_I32 || !w || w->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), E = rad_args_geti(a, "experts"), k = rad_args_geti(a, "k");
    const int norm = rad_args_geti_or(a, "norm", 0) != 0;
    if (E <= 0 || k <= 0 || k > E) return RAD_E_ARG;
    for (int64_t t = 0; t < n; ++t) {
        const float* x = (const float*)((const char*)logits->data + t * rad_tensor_row_pitch(logits));
        int32_t* id_row = (int32_t*)((char*)ids->data + t * rad_tensor_row_pitch(ids));
        float* w_row = (float*)((char*)w->data + t * rad_tensor_row_pitch(w));
        float mx = -INFINITY, sum = 0.0f, picked = 0.0f, last_p = INFINITY;
        int64_t last_id = -1;
        for (int64_t e = 0; e < E; ++e) mx = fmaxf(mx, rad_host_moe_logit(x, e));
        for (int64_t e = 0; e < E; ++e) sum += rad_host_moe_exp(x, e, mx);
        for (int64_t j = 0; j < k; ++j) {
            float bp = -1.0f;
            int64_t bid = -1;
            for (int64_t e = 0; e < E; ++e) {
                const float p = rad_host_moe_exp(x, e, mx) / sum;
                const int below = p < last_p || (p == last_p && e > last_id); /* after the previous pick */
                if (below && p > bp) {                                        /* ascending e: equal values keep the lower id */
                    bp = p;
                    bid = e;
                }
            }
            id_row[j] = (int32_t)bid;
            w_row[j] = bp;
            picked += bp;
            last_p = bp;
            last_id = bid;
        }
        if (norm)
            for (int64_t j = 0; j < k; ++j) w_row[j] = w_row[j] / picked;
    }
    return RAD_OK;
}

/* y[t] = y[t] + sigmoid(g[t, 0]) * x[t]. */
static inline int rad_host_gated_add(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *g = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!x || x->dtype != RAD_F32 || !g || g->dtype != RAD_F32 || !y || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    for (int64_t i = 0; i < n; ++i) {
        const float gate = *(const float*)((const char*)g->data + i * rad_tensor_row_pitch(g));
        const float s = 1.0f / (1.0f + expf(-gate));
        const float* p = (const float*)((const char*)x->data + i * rad_tensor_row_pitch(x));
        float* o = (float*)((char*)y->data + i * rad_tensor_row_pitch(y));
        for (int64_t j = 0; j < dim; ++j) o[j] = o[j] + s * p[j];
    }
    return RAD_OK;
}

#endif
