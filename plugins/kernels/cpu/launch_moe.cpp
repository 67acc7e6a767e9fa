// launch_moe.cpp: the mixture-of-experts rows (and gated_add, a shared expert's join). Routing is a sliver of a layer (experts x rows
// exponentials), so it runs in libref's order and gives libref's bytes (this file is built without
// FMA contraction); the experts' MLPs are the chain of libcpu's own gemm and swiglu rows over the
// rows grouped by expert (rad_compose_moe.h), so prefill runs blocked GEMMs per expert.
#include <radiance/kernels/rad_compose_moe.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "launch_util.h"

using namespace cpu;

int cpu_moe_route(const RadArgs* a) {
    const RadTensor* logits = rad_arg_in(a, 0);
    RadTensor* ids = rad_arg_out(a, 1);
    RadTensor* w = rad_arg_out(a, 2);
    if (!is_f32(logits) || !is_i32(ids) || !is_f32(w)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), E = rad_args_geti(a, "experts"), k = rad_args_geti(a, "k");
    const bool norm = rad_args_geti_or(a, "norm", 0) != 0;
    if (E <= 0 || k <= 0 || k > E) return RAD_E_ARG;
    std::vector<float> p(static_cast<size_t>(E));
    std::vector<int32_t> order(static_cast<size_t>(E));
    const RowsIn in = rows_in(logits);
    for (int64_t t = 0; t < n; ++t) {
        const float* x = in.row(t);
        float mx = -INFINITY;
        for (int64_t e = 0; e < E; ++e) mx = std::max(mx, std::isnan(x[e]) ? -INFINITY : x[e]);
        float sum = 0.0f;
        for (int64_t e = 0; e < E; ++e) {
            p[e] = mx == -INFINITY ? 1.0f : std::exp((std::isnan(x[e]) ? -INFINITY : x[e]) - mx);
            sum += p[e];
        }
        for (int64_t e = 0; e < E; ++e) p[e] = p[e] / sum;
        for (int64_t e = 0; e < E; ++e) order[e] = static_cast<int32_t>(e);
        // the k largest, equal values to the lower id (a strict order on (p desc, id asc))
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          [&](int32_t i, int32_t j) { return p[i] > p[j] || (p[i] == p[j] && i < j); });
        float picked = 0.0f;
        for (int64_t j = 0; j < k; ++j) picked += p[order[j]];
        auto* id_row = reinterpret_cast<int32_t*>(static_cast<char*>(ids->data) + t * rad_tensor_row_pitch(ids));
        auto* w_row = reinterpret_cast<float*>(static_cast<char*>(w->data) + t * rad_tensor_row_pitch(w));
        for (int64_t j = 0; j < k; ++j) {
            id_row[j] = order[j];
            w_row[j] = norm ? p[order[j]] / picked : p[order[j]];
        }
    }
    return RAD_OK;
}

int cpu_moe_mlp(const RadArgs* a) { return rad_compose_moe_mlp(a, cpu_gemm, cpu_swiglu); }

// A shared expert's gated join: a row's worth of work per token, in libref's order.
int cpu_gated_add(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *g = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!is_f32(x) || !is_f32(g) || !is_f32(y)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const RowsIn xs = rows_in(x), gs = rows_in(g);
    const RowsOut ys = rows_out(y);
    for (int64_t i = 0; i < n; ++i) {
        const float s = 1.0f / (1.0f + std::exp(-gs.row(i)[0]));
        const float* p = xs.row(i);
        float* o = ys.row(i);
        for (int64_t j = 0; j < dim; ++j) o[j] = o[j] + s * p[j];
    }
    return RAD_OK;
}
