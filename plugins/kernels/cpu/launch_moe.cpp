// launch_moe.cpp: the mixture-of-experts rows (and gated_add, a shared expert's join). Routing is
// a sliver of a layer (experts x rows exponentials), so it is libref's own code (rad_host_moe.h).
// The experts' MLPs: for a decode step, two pool regions over (row, pick) pairs (below); for
// more rows, the chain of libcpu's own gemm and swiglu rows over the rows grouped by expert
// (rad_compose_moe.h), so prefill runs blocked GEMMs per expert.
#include <radiance/kernels/rad_compose_moe.h>
#include <radiance/kernels/rad_host_moe.h>

#include <cmath>
#include <vector>

#include "deterministic.h"
#include "launch_util.h"

// Routing and the shared expert's join as libref's (rad_host_moe.h), instantiated here, in a file
// built without FMA contraction.
int cpu_moe_route(const RadArgs* a) { return rad_host_moe_route(a); }
int cpu_gated_add(const RadArgs* a) { return rad_host_gated_add(a); }

int cpu_moe_mlp(const RadArgs* a) { return rad_compose_moe_mlp(a, cpu_gemm, cpu_swiglu); }

namespace {

using namespace cpu;

constexpr int64_t kTile = 12;  // columns a slice is a multiple of (as the gemm rows cut theirs)

// [gate | up] products [pairs, 2F], then the activation [pairs, F].
uint64_t decode_bytes(int64_t n, int64_t F, int64_t k) { return static_cast<uint64_t>(n * k) * static_cast<uint64_t>(3 * F) * 4u; }

// Slices of `cols` columns for `units` independent rows of work so that the pool gets a few tasks
// a thread, each at least kDecodeMinTiles tiles wide (as run_blocks cuts a decode gemm).
int64_t slice_width(int64_t cols, int64_t units, int threads) {
    const int64_t tiles = (cols + kTile - 1) / kTile;
    const int64_t want = std::max<int64_t>(1, (int64_t{threads} * 4 + units - 1) / units);
    const int64_t slices = std::max<int64_t>(1, std::min<int64_t>(want, tiles / kDecodeMinTiles));
    return (tiles + slices - 1) / slices * kTile;
}

}  // namespace

uint64_t cpu_moe_mlp_decode_scratch(const RadArgs* geom) {
    const uint64_t own = decode_bytes(rad_args_geti(geom, "n"), rad_args_geti(geom, "ff"), rad_args_geti(geom, "k"));
    // --deterministic runs the chain instead (below); the engine sets the mode before it plans
    return deterministic() ? std::max(own, rad_compose_moe_mlp_scratch(geom)) : own;
}

// A decode step's experts in two pool regions where the chain takes three launches an expert (24
// regions a layer at 8 picks, each a wake-up and a barrier of the pool):
// 1. (pair, slice of F) tasks: the slice's gate and up rows of the pair's expert through the decode
//    gemm, then silu(gate) * up into act[pair];
// 2. (row, slice of dim) tasks: every pick's down rows over act[pair], times the pick's weight,
//    added in ascending expert order (the definition's).
int cpu_moe_mlp_decode(const RadArgs* a) {
    // --deterministic: the chain, whose gemms sum a row as a prefill's do (deterministic.h); these
    // gemvs sum it the row walk's way.
    if (deterministic()) return cpu_moe_mlp(a);
    if (a->n_t < 6) return RAD_E_ARG;
    const RadTensor *x = &a->t[0], *ids = &a->t[1], *wt = &a->t[2], *gu = &a->t[3], *down = &a->t[4];
    RadTensor* y = &a->t[5];
    if (!is_f32(x) || !is_i32(ids) || !is_f32(wt) || !is_f32(y) || !is_float_dtype(gu->dtype) || gu->dtype != down->dtype)
        return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), d = rad_args_geti(a, "dim"), F = rad_args_geti(a, "ff"), E = rad_args_geti(a, "experts"),
                  k = rad_args_geti(a, "k");
    if (n <= 0 || d <= 0 || F <= 0 || E <= 0 || k <= 0 || k > E) return RAD_E_ARG;
    if (gu->rank != 2 || gu->shape[0] != E * 2 * F || gu->shape[1] != d) return RAD_E_SHAPE;
    if (down->rank != 2 || down->shape[0] != E * d || down->shape[1] != F) return RAD_E_SHAPE;
    if (!a->scratch || a->scratch_bytes < decode_bytes(n, F, k)) return RAD_E_NOMEM;
    const RowsIn xs = rows_in(x), id_rows = rows_in(ids), w_rows = rows_in(wt);
    const RowsOut ys = rows_out(y);
    auto id_of = [&](int64_t t, int64_t j) { return reinterpret_cast<const int32_t*>(id_rows.row(t))[j]; };
    for (int64_t t = 0; t < n; ++t)
        for (int64_t j = 0; j < k; ++j)
            if (id_of(t, j) < 0 || id_of(t, j) >= E) return RAD_E_ARG;  // as the chain refuses them
    const int64_t pairs = n * k;
    const uint64_t es = static_cast<uint64_t>(rad_dtype_bits(gu->dtype) / 8);
    float* g = static_cast<float*>(a->scratch);
    float* act = g + pairs * 2 * F;
    const KernelTable& kt = kernels();

    const int threads_gu = threads_for(2.0 * static_cast<double>(pairs * 2 * F * d), 4 * kMinWorkPerThread);
    const int64_t fw = slice_width(F, pairs, threads_gu), f_slices = (F + fw - 1) / fw;
    parallel_for(pairs * f_slices, threads_gu, [&](int64_t task) {
        const int64_t p = task / f_slices, f0 = task % f_slices * fw, f1 = std::min(F, f0 + fw);
        GemmArgs ga{};
        ga.x = {reinterpret_cast<const char*>(xs.row(p / k)), 0};
        ga.w = static_cast<const char*>(gu->data) + static_cast<uint64_t>(id_of(p / k, p % k)) * 2 * F * d * es;
        ga.wdt = gu->dtype;
        ga.y = {reinterpret_cast<char*>(g + p * 2 * F), 0};
        ga.M = 1, ga.N = 2 * F, ga.K = d;
        kt.gemm(ga, 0, 1, f0, f1);
        kt.gemm(ga, 0, 1, F + f0, F + f1);
        const float* gp = g + p * 2 * F;
        for (int64_t f = f0; f < f1; ++f) act[p * F + f] = gp[f] / (1.0f + std::exp(-gp[f])) * gp[F + f];
    });

    const int threads_down = threads_for(2.0 * static_cast<double>(pairs * d * F), 4 * kMinWorkPerThread);
    const int64_t cw = slice_width(d, n, threads_down), c_slices = (d + cw - 1) / cw;
    parallel_for(n * c_slices, threads_down, [&](int64_t task) {
        const int64_t t = task / c_slices, c0 = task % c_slices * cw, c1 = std::min(d, c0 + cw);
        static thread_local std::vector<float> part, sum;
        part.resize(static_cast<size_t>(d));
        sum.assign(static_cast<size_t>(c1 - c0), 0.0f);
        std::vector<int64_t> order;  // picks by ascending expert id (k is small)
        for (int64_t j = 0; j < k; ++j) {
            auto at = order.begin();
            while (at != order.end() && id_of(t, *at) <= id_of(t, j)) ++at;
            order.insert(at, j);
        }
        for (int64_t j : order) {
            GemmArgs gd{};
            gd.x = {reinterpret_cast<const char*>(act + (t * k + j) * F), 0};
            gd.w = static_cast<const char*>(down->data) + static_cast<uint64_t>(id_of(t, j)) * d * F * es;
            gd.wdt = down->dtype;
            gd.y = {reinterpret_cast<char*>(part.data()), 0};
            gd.M = 1, gd.N = d, gd.K = F;
            kt.gemm(gd, 0, 1, c0, c1);
            const float w = w_rows.row(t)[j];
            for (int64_t c = c0; c < c1; ++c) sum[c - c0] += part[c] * w;
        }
        for (int64_t c = c0; c < c1; ++c) ys.row(t)[c] = sum[c - c0];
    });
    return RAD_OK;
}
