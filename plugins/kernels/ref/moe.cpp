// moe_mlp from its definition (docs/OPS.md), token by token: the oracle the faster rows (grouped
// by expert, on the card) are checked against. Routing and gated_add are rad_host_moe.h's, shared
// with libcpu so both route alike.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ref_util.h"

// y[t] = sum over t's experts in ascending id order of w * down_e(swiglu(gate_up_e . x[t])).
int ref_moe_mlp(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    const RadTensor* ids = rad_arg_in(a, 1);
    const RadTensor* w = rad_arg_in(a, 2);
    const RadTensor* gu = rad_arg_in(a, 3);
    const RadTensor* down = rad_arg_in(a, 4);
    RadTensor* y = rad_arg_out(a, 5);
    if (!ref::is_f32(x) || !ids || ids->dtype != RAD_I32 || !ref::is_f32(w) || !gu || !down || !ref::is_f32(y)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), d = rad_args_geti(a, "dim"), F = rad_args_geti(a, "ff"), E = rad_args_geti(a, "experts"),
                  k = rad_args_geti(a, "k");
    if (gu->rank != 2 || gu->shape[0] != E * 2 * F || gu->shape[1] != d) return RAD_E_SHAPE;
    if (down->rank != 2 || down->shape[0] != E * d || down->shape[1] != F) return RAD_E_SHAPE;
    std::vector<float> act(static_cast<size_t>(F));
    std::vector<std::pair<int32_t, float>> picks(static_cast<size_t>(k));
    for (int64_t t = 0; t < n; ++t) {
        const float* xr = ref::row<const float>(x, t);
        for (int64_t j = 0; j < k; ++j) {
            const int32_t e = ref::row<const int32_t>(ids, t)[j];
            if (e < 0 || e >= E) return RAD_E_ARG;
            picks[j] = {e, ref::row<const float>(w, t)[j]};
        }
        std::sort(picks.begin(), picks.end(), [](auto& l, auto& r) { return l.first < r.first; });
        float* yr = ref::row<float>(y, t);
        for (int64_t c = 0; c < d; ++c) yr[c] = 0.0f;
        for (const auto& [e, weight] : picks) {
            for (int64_t f = 0; f < F; ++f) {
                float g = 0.0f, u = 0.0f;
                for (int64_t c = 0; c < d; ++c) g += xr[c] * ref::wload(gu, e * 2 * F + f, c, d);
                for (int64_t c = 0; c < d; ++c) u += xr[c] * ref::wload(gu, e * 2 * F + F + f, c, d);
                act[f] = g / (1.0f + std::exp(-g)) * u;
            }
            for (int64_t c = 0; c < d; ++c) {
                float acc = 0.0f;
                for (int64_t f = 0; f < F; ++f) acc += act[f] * ref::wload(down, e * d + c, f, F);
                yr[c] += acc * weight;
            }
        }
    }
    return RAD_OK;
}
