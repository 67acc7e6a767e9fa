#include <vector>

#include "ref_util.h"

// y[m, n] = sum_k x[m, k] w[n, k] (+ bias[n]). Each weight row is widened once, then every input
// row is dotted with it in k order: the reference's summation order.
int ref_gemm(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    const RadTensor* w = rad_arg_in(a, 1);
    const RadTensor* bias = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!ref::is_f32(x) || !w || !ref::is_f32(y)) return RAD_E_DTYPE;
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N"), K = rad_args_geti(a, "K");
    if (w->rank != 2 || w->shape[0] != N || w->shape[1] != K) return RAD_E_SHAPE;
    std::vector<float> wrow(static_cast<size_t>(K));
    for (int64_t nn = 0; nn < N; ++nn) {
        for (int64_t k = 0; k < K; ++k) wrow[k] = ref::wload(w, nn, k, K);
        const float b = bias ? rad_load_f32(bias->dtype, bias->data, nn) : 0.0f;
        for (int64_t m = 0; m < M; ++m) {
            const float* xr = ref::row<const float>(x, m);
            float acc = 0.0f;
            for (int64_t k = 0; k < K; ++k) acc += xr[k] * wrow[k];
            ref::row<float>(y, m)[nn] = bias ? acc + b : acc;
        }
    }
    return RAD_OK;
}
