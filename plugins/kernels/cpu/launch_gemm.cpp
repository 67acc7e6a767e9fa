// launch_gemm.cpp: the two gemm rows. cpu_gemm_decode (M <= 8) splits only N, so every weight
// row is streamed from memory once for all M rows; cpu_gemm (any M) splits y into blocks of
// kMBlock rows by slices of N. With AVX512_BF16 (level 3), bf16 weights go through the
// dot-product kernel over x split into bf16 hi and lo parts.
#include <cstring>
#include <vector>

#include "launch_util.h"

namespace {

using namespace cpu;

// Rows of x per block of a prefill gemm: with the K block of 512, 128 rows of f32 x are 256 KiB,
// which stays in L2 while the w tiles of a slice pass over it.
constexpr int64_t kMBlock = 128;

int read_gemm(const RadArgs* a, GemmArgs* g) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *bias = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!is_f32(x) || !w || !is_f32(y) || !is_float_dtype(w->dtype)) return RAD_E_DTYPE;
    if (bias && !is_float_dtype(bias->dtype)) return RAD_E_DTYPE;
    g->M = rad_args_geti(a, "M");
    g->N = rad_args_geti(a, "N");
    g->K = rad_args_geti(a, "K");
    if (w->rank != 2 || w->shape[0] != g->N || w->shape[1] != g->K || g->M < 0 || g->N < 0 || g->K < 0)
        return RAD_E_SHAPE;
    g->x = rows_in(x);
    g->w = w->data;
    g->wdt = w->dtype;
    g->bias = bias ? bias->data : nullptr;
    g->bdt = bias ? bias->dtype : RAD_F32;
    g->y = rows_out(y);
    g->xbf = nullptr;
    g->kpad = 0;
    return RAD_OK;
}

// K = 0: the sums are empty, y is the bias.
void empty_sum(const GemmArgs& g) {
    for (int64_t m = 0; m < g.M; ++m)
        for (int64_t n = 0; n < g.N; ++n) g.y.row(m)[n] = g.bias ? rad_load_f32(g.bdt, g.bias, n) : 0.0f;
}

using BlockFn = void (*)(const GemmArgs&, int64_t, int64_t, int64_t, int64_t);

void pack_rows(const GemmArgs& g, int64_t m0, int64_t m1) {
    kernels().pack_bf16(g, const_cast<uint16_t*>(g.xbf), m0, m1);
}

// The bf16-dot kernel when this level has it and the weights are bf16: packs x (in parallel
// over rows) into `packed` and returns that kernel; otherwise the widening kernel.
BlockFn choose_kernel(GemmArgs& g, std::vector<uint16_t>& packed) {
    const KernelTable& kt = kernels();
    if (!kt.gemm_bf16dot || g.wdt != RAD_BF16) return kt.gemm;
    g.kpad = (g.K + 31) / 32 * 32;
    packed.resize(static_cast<size_t>(g.M * 2 * g.kpad));
    g.xbf = packed.data();
    for_rows(g.M, static_cast<double>(g.K) * 4, pack_rows, g);
    return kt.gemm_bf16dot;
}

// y[m-block, n-slice] tasks; `m_block` rows per block (M for decode).
void run_blocks(const GemmArgs& g, BlockFn fn, int64_t m_block) {
    const int nr = 12;  // slices hold whole register tiles of every kernel (3 or 4 rows of w)
    const double flops = 2.0 * static_cast<double>(g.M) * static_cast<double>(g.N) * static_cast<double>(g.K);
    const int threads = threads_for(flops, 4 * kMinWorkPerThread);
    const int64_t m_blocks = (g.M + m_block - 1) / m_block;
    const int64_t tiles = (g.N + nr - 1) / nr;
    // Enough slices that every thread has a few tasks, each at least 16 tiles (192 rows of w) wide.
    const int64_t want = std::max<int64_t>(1, (int64_t{threads} * 4 + m_blocks - 1) / m_blocks);
    int64_t slices = std::min<int64_t>(want, std::max<int64_t>(1, tiles / 16));
    if (m_blocks * slices < threads) slices = std::min<int64_t>(tiles, (threads + m_blocks - 1) / m_blocks);
    const int64_t per_slice = (tiles + slices - 1) / slices * nr;
    parallel_for(m_blocks * slices, threads, [&](int64_t t) {
        const int64_t mb = t % m_blocks, s = t / m_blocks;
        const int64_t m0 = mb * m_block, m1 = std::min(g.M, m0 + m_block);
        const int64_t n0 = s * per_slice, n1 = std::min(g.N, n0 + per_slice);
        if (m0 < m1 && n0 < n1) fn(g, m0, m1, n0, n1);
    });
}

int launch(const RadArgs* a, bool decode) {
    GemmArgs g;
    if (int rc = read_gemm(a, &g); rc != RAD_OK) return rc;
    if (g.M == 0 || g.N == 0) return RAD_OK;
    if (g.K == 0) return empty_sum(g), RAD_OK;
    static thread_local std::vector<uint16_t> packed;
    const BlockFn fn = choose_kernel(g, packed);
    run_blocks(g, fn, decode ? g.M : kMBlock);
    return RAD_OK;
}

}  // namespace

int cpu_gemm(const RadArgs* a) { return launch(a, false); }
int cpu_gemm_decode(const RadArgs* a) { return launch(a, true); }
