// k_moe.cu: the mixture-of-experts rows (docs/OPS.md moe_route, moe_mlp, gated_add) on the card.
//
// moe_route: a warp per row, picking in the order libref does: the largest (p, -id) below the
// previous pick, k times (a thread per row took 117 us for one row of 128 experts, k 8, H100).
//
// moe_mlp reads only the routed experts' weights, and every launch has a grid fixed by the row
// count, so a recorded decode graph replays whatever the router picks. Two paths:
// - up to kGemvPairs (row, pick) pairs (decode): k_moe_gemv.h's weight-streaming gemvs, whose
//   lanes keep 16 loads in flight and whose down kernel takes every pick of a row's columns and
//   sums them itself;
// - more pairs: the pairs counting-sorted by expert on the card (one block), then grouped tiles
//   over each expert's rows (tiles of one expert only; the grid is sized for the worst case and
//   surplus blocks return), so an expert's weights are read once per tile of its rows: for bf16
//   weights the tensor cores (k_moe_mma.h), else f32 FMA tiles; a last kernel sums each row's
//   pick outputs.
// These replaced session 21's pair gemvs and FMA-only tiles (the RADIANCE_GPU_MOE_V2 switch):
// on Qwen3-30B-A3B's experts (rad-kbench, H100, 2026-12-07) 41 vs 65 us at 1 row, 124 vs 1254 us
// at 4, 712 vs 3164 at 64, 803 vs 3313 at 256.
// Either way a row's picks are added in ascending expert order, the definition's, and no atomics
// add floats. Rows are taken in chunks of kChunkRows so the scratch stays bounded at any step size.
#include <cfloat>
#include <climits>
#include <type_traits>

#include "k_common.h"
#include "k_moe_gemv.h"
#include "k_moe_mma.h"
#include "k_paged.h"
#include "k_vec.h"

namespace gpu {
namespace {

using moe::expert_of;
using moe::kMaxPick;

constexpr int kChunkRows = 1024;             // rows a pass of the kernels below takes
constexpr int kGemvPairs = 64;               // pairs at most for the gemv path
constexpr int kBM = 32, kBN = 64, kBK = 32;  // the FMA tiles

// A warp per row: lane l holds experts l, l + 32, ...; each of the k rounds takes the largest
// (p, -id) below the previous pick, reduced over the warp.
__global__ void k_moe_route(const float* x, int64_t px, int32_t* ids, int64_t pi, float* w, int64_t pw, int64_t n, int E, int k, int norm) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t t = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
    const int lane = threadIdx.x % kWarpSize;
    if (t >= n) return;
    const float* r = x + t * px;
    auto logit = [&](int e) { return r[e] != r[e] ? -INFINITY : r[e]; };
    float mx = -INFINITY;
    for (int e = lane; e < E; e += kWarpSize) mx = fmaxf(mx, logit(e));
    mx = gpu_warp_max(mx);
    auto p_of = [&](int e) { return mx == -INFINITY ? 1.0f : expf(logit(e) - mx); };
    float sum = 0.0f;
    for (int e = lane; e < E; e += kWarpSize) sum += p_of(e);
    sum = gpu_warp_sum(sum);
    float last_p = INFINITY, picked = 0.0f, mine = 0.0f;
    int last_id = -1;
    for (int j = 0; j < k; ++j) {
        float bp = -1.0f;
        int bid = INT_MAX;
        for (int e = lane; e < E; e += kWarpSize) {
            const float p = p_of(e) / sum;
            const bool below = p < last_p || (p == last_p && e > last_id);  // after the previous pick
            if (below && (p > bp || (p == bp && e < bid))) {
                bp = p;
                bid = e;
            }
        }
#pragma unroll
        for (int m = kWarpSize / 2; m > 0; m >>= 1) {
            const float op = gpu_shfl_xor(bp, m);
            const int oid = gpu_shfl_xor(bid, m);
            if (op > bp || (op == bp && oid < bid)) {
                bp = op;
                bid = oid;
            }
        }
        if (lane == j) mine = bp;  // lane j keeps pick j's weight for the write below
        if (lane == 0) ids[t * pi + j] = bid;
        picked += bp;
        last_p = bp;
        last_id = bid;
    }
    if (lane < k) w[t * pw + lane] = norm ? mine / picked : mine;
}

// The pairs sorted by expert (one block): start[e] the first slot of expert e (E + 1 entries),
// tiles[e] the first bm-row tile of expert e (E + 1 entries), sorted[slot] = pair. The order of
// pairs within an expert does not matter: each row's product is its own.
__global__ void __launch_bounds__(1024)
    k_moe_sort(const int32_t* ids, int64_t pi, int64_t pairs, int E, int k, int bm, int* start, int* tiles, int* cursor, int* sorted) {
    gpu_grid_wait();
    gpu_grid_release();
    for (int e = threadIdx.x; e < E; e += blockDim.x) cursor[e] = 0;
    __syncthreads();
    for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) {
        const int e = expert_of(ids, pi, k, p, E);
        if (e >= 0) atomicAdd(&cursor[e], 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int s = 0, t = 0;
        for (int e = 0; e < E; ++e) {
            start[e] = s;
            tiles[e] = t;
            const int c = cursor[e];
            s += c;
            t += (c + bm - 1) / bm;
            cursor[e] = start[e];
        }
        start[E] = s;
        tiles[E] = t;
    }
    __syncthreads();
    for (int64_t p = threadIdx.x; p < pairs; p += blockDim.x) {
        const int e = expert_of(ids, pi, k, p, E);
        if (e >= 0) sorted[atomicAdd(&cursor[e], 1)] = static_cast<int>(p);
    }
}

// One tile of kBM sorted rows of one expert against kBN outputs. GLU: A is x (row pair / k), the
// weights the expert's gate rows and up rows, act[slot, n] = silu(g) * u. Otherwise A is act (row
// = slot), the weights the expert's down rows, out[pair, n] = acc * w[pair]. 256 threads, each
// 2 rows x 4 outputs (x2 for GLU); weights widened into shared memory.
template <typename W, bool GLU>
__global__ void __launch_bounds__(256)
    k_moe_group(const float* a, int64_t pa, const W* wbase, const int* start, const int* tiles, const int* sorted, const float* wt,
                int64_t pw, float* y, int64_t K, int64_t N, int64_t F, int E, int k) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float as[kBM][kBK + 1];
    __shared__ float ws[GLU ? 2 : 1][kBN][kBK + 1];
    const int b = blockIdx.x;
    if (b >= tiles[E]) return;
    const int e = seq_of_row(tiles, E, b);  // the expert whose tiles hold b: the last e with tiles[e] <= b
    const int m0 = start[e] + (b - tiles[e]) * kBM, rows = min(kBM, start[e + 1] - m0);
    const int64_t n0 = static_cast<int64_t>(blockIdx.y) * kBN;
    const W* wg = wbase + (GLU ? static_cast<int64_t>(e) * 2 * F : static_cast<int64_t>(e) * N) * K;
    const W* wu = wg + F * K;
    const int tr = threadIdx.x / 16, tc = threadIdx.x % 16;  // rows 2 tr, 2 tr + 1; outputs tc + 16 q
    float acc[2][4] = {}, accu[2][4] = {};
    for (int64_t k0 = 0; k0 < K; k0 += kBK) {
        for (int i = threadIdx.x; i < kBM * kBK; i += blockDim.x) {
            const int r = i / kBK, c = i % kBK;
            float v = 0.0f;
            if (r < rows && k0 + c < K) {
                const int64_t slot = m0 + r, row = GLU ? sorted[slot] / k : slot;
                v = a[row * pa + k0 + c];
            }
            as[r][c] = v;
        }
        for (int i = threadIdx.x; i < kBN * kBK; i += blockDim.x) {
            const int r = i / kBK, c = i % kBK;
            const bool in = n0 + r < N && k0 + c < K;
            ws[0][r][c] = in ? gpu_to_f32(wg[(n0 + r) * K + k0 + c]) : 0.0f;
            if constexpr (GLU) ws[1][r][c] = in ? gpu_to_f32(wu[(n0 + r) * K + k0 + c]) : 0.0f;
        }
        __syncthreads();
#pragma unroll 8
        for (int c = 0; c < kBK; ++c) {
            const float a0 = as[2 * tr][c], a1 = as[2 * tr + 1][c];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const float wv = ws[0][tc + 16 * q][c];
                acc[0][q] += a0 * wv;
                acc[1][q] += a1 * wv;
                if constexpr (GLU) {
                    const float uv = ws[1][tc + 16 * q][c];
                    accu[0][q] += a0 * uv;
                    accu[1][q] += a1 * uv;
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        const int r = 2 * tr + i;
        if (r >= rows) continue;
        const int64_t slot = m0 + r;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
            const int64_t n = n0 + tc + 16 * q;
            if (n >= N) continue;
            if constexpr (GLU) {
                y[slot * N + n] = silu(acc[i][q]) * accu[i][q];
            } else {
                const int64_t pair = sorted[slot];
                y[pair * N + n] = acc[i][q] * wt[(pair / k) * pw + pair % k];
            }
        }
    }
}

// y[t] = the sum of row t's pair outputs in ascending expert order (ids out of range skipped).
__global__ void k_moe_combine(const float* out, const int32_t* ids, int64_t pi, float* y, int64_t py, int64_t d, int E, int k) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t t = blockIdx.x;
    int order[kMaxPick];
    int m = 0;
    for (int j = 0; j < k; ++j) {  // insertion by expert id
        const int e = ids[t * pi + j];
        if (e < 0 || e >= E) continue;
        int at = m++;
        while (at > 0 && ids[t * pi + order[at - 1]] > e) {
            order[at] = order[at - 1];
            --at;
        }
        order[at] = j;
    }
    for (int64_t c = threadIdx.x; c < d; c += blockDim.x) {
        float s = 0.0f;
        for (int i = 0; i < m; ++i) s += out[(t * k + order[i]) * d + c];
        y[t * py + c] = s;
    }
}

__global__ void k_gated_add(const float* x, int64_t px, const float* g, int64_t pg, float* y, int64_t py, int64_t dim) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t t = blockIdx.x;
    const float s = 1.0f / (1.0f + expf(-g[t * pg]));
    for (int64_t c = threadIdx.x; c < dim; c += blockDim.x) y[t * py + c] = y[t * py + c] + s * x[t * px + c];
}

struct MoeScratch {
    int *start, *tiles, *cursor, *sorted;
    float *act, *out;
};

// Scratch for chunks of up to `rows` rows: ints (3 (E + 1) + pairs), 256-aligned, then act
// [pairs, F] and out [pairs, d].
uint64_t int_bytes(int64_t E, int64_t pairs) { return (static_cast<uint64_t>(3 * (E + 1) + pairs) * 4 + 255) / 256 * 256; }

uint64_t scratch_bytes(int64_t rows, int64_t d, int64_t F, int64_t E, int64_t k) {
    const int64_t pairs = (rows < kChunkRows ? rows : kChunkRows) * k;
    return int_bytes(E, pairs) + static_cast<uint64_t>(pairs) * static_cast<uint64_t>(F + d) * 4;
}

MoeScratch carve(void* base, int64_t rows, int64_t E, int64_t k, int64_t F) {
    const int64_t pairs = rows * k;
    MoeScratch s;
    s.start = static_cast<int*>(base);
    s.tiles = s.start + E + 1;
    s.cursor = s.tiles + E + 1;
    s.sorted = s.cursor + E + 1;
    s.act = reinterpret_cast<float*>(static_cast<char*>(base) + int_bytes(E, pairs));
    s.out = s.act + pairs * F;
    return s;
}

template <typename W>
int moe_chunk(const RadArgs* a, const float* x, int64_t px, const int32_t* ids, int64_t pi, const float* wt, int64_t pw, const W* gu,
              const W* down, float* y, int64_t py, int64_t n, int64_t d, int64_t F, int E, int k, const MoeScratch& s) {
    const gpuStream_t st = stream_of(a);
    const int64_t pairs = n * k;
    constexpr int V = Vec<W>::kN;
    // the streaming kernels read x and act 16 bytes at a time
    const bool aligned = d % V == 0 && F % V == 0 && px % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0;
    if (pairs <= kGemvPairs && aligned) {
        gpu_launch(moe::k_moe_gemv_gu<W>, dim3(static_cast<unsigned>(ceil_div(F, 16)), static_cast<unsigned>(pairs)), 256, 0, st, x, px,
                   ids, pi, gu, s.act, d, F, E, k);
        gpu_launch(moe::k_moe_gemv_down<W>, dim3(static_cast<unsigned>(ceil_div(d, 8)), static_cast<unsigned>(n)), 256, 0, st,
                   static_cast<const float*>(s.act), ids, pi, wt, pw, down, y, py, d, F, E, k);
        return launched();
    }
#if RAD_GPU_CUDA
    if constexpr (std::is_same_v<W, gpu_bf16>) {
        if (aligned && d % 8 == 0 && F % 8 == 0) {
            using moe::kMmaBM, moe::kMmaBN;
            gpu_launch(k_moe_sort, 1, 1024, 0, st, ids, pi, pairs, E, k, kMmaBM, s.start, s.tiles, s.cursor, s.sorted);
            const unsigned worst = static_cast<unsigned>(ceil_div(pairs, kMmaBM) + E);  // tiles at most
            gpu_launch(moe::k_moe_group_mma<true>, dim3(worst, static_cast<unsigned>(ceil_div(F, kMmaBN))), 256, 0, st, x, px, gu,
                       static_cast<const int*>(s.start), static_cast<const int*>(s.tiles), static_cast<const int*>(s.sorted), wt, pw, s.act,
                       d, F, F, E, k);
            gpu_launch(moe::k_moe_group_mma<false>, dim3(worst, static_cast<unsigned>(ceil_div(d, kMmaBN))), 256, 0, st,
                       static_cast<const float*>(s.act), F, down, static_cast<const int*>(s.start), static_cast<const int*>(s.tiles),
                       static_cast<const int*>(s.sorted), wt, pw, s.out, F, d, F, E, k);
            gpu_launch(k_moe_combine, static_cast<unsigned>(n), 256, 0, st, static_cast<const float*>(s.out), ids, pi, y, py, d, E, k);
            return launched();
        }
    }
#endif
    gpu_launch(k_moe_sort, 1, 1024, 0, st, ids, pi, pairs, E, k, kBM, s.start, s.tiles, s.cursor, s.sorted);
    const unsigned worst = static_cast<unsigned>(ceil_div(pairs, kBM) + E);  // tiles at most
    gpu_launch(k_moe_group<W, true>, dim3(worst, static_cast<unsigned>(ceil_div(F, kBN))), 256, 0, st, x, px, gu,
               static_cast<const int*>(s.start), static_cast<const int*>(s.tiles), static_cast<const int*>(s.sorted), wt, pw, s.act, d, F,
               F, E, k);
    gpu_launch(k_moe_group<W, false>, dim3(worst, static_cast<unsigned>(ceil_div(d, kBN))), 256, 0, st, static_cast<const float*>(s.act), F,
               down, static_cast<const int*>(s.start), static_cast<const int*>(s.tiles), static_cast<const int*>(s.sorted), wt, pw, s.out,
               F, d, F, E, k);
    gpu_launch(k_moe_combine, static_cast<unsigned>(n), 256, 0, st, static_cast<const float*>(s.out), ids, pi, y, py, d, E, k);
    return launched();
}

}  // namespace

int moe_route(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* ids = rad_arg_out(a, 1);
    RadTensor* w = rad_arg_out(a, 2);
    if (!x || !ids || !w || x->dtype != RAD_F32 || ids->dtype != RAD_I32 || w->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), E = rad_args_geti(a, "experts"), k = rad_args_geti(a, "k");
    if (E <= 0 || k <= 0 || k > E || k > kWarpSize) return RAD_E_ARG;
    if (n <= 0) return RAD_OK;
    gpu_launch(k_moe_route, static_cast<unsigned>(ceil_div(n, 4)), 4 * kWarpSize, 0, stream_of(a), static_cast<const float*>(x->data),
               pitch_elems(x), static_cast<int32_t*>(ids->data), pitch_elems(ids), static_cast<float*>(w->data), pitch_elems(w), n,
               static_cast<int>(E), static_cast<int>(k), static_cast<int>(rad_args_geti_or(a, "norm", 0)));
    return launched();
}

int gated_add(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *g = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!x || !g || !y || x->dtype != RAD_F32 || g->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    if (n <= 0) return RAD_OK;
    gpu_launch(k_gated_add, static_cast<unsigned>(n), 256, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
               static_cast<const float*>(g->data), pitch_elems(g), static_cast<float*>(y->data), pitch_elems(y), dim);
    return launched();
}

uint64_t moe_mlp_scratch(const RadArgs* geom) {
    return scratch_bytes(rad_args_geti(geom, "n"), rad_args_geti(geom, "dim"), rad_args_geti(geom, "ff"), rad_args_geti(geom, "experts"),
                         rad_args_geti(geom, "k"));
}

int moe_mlp(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *ids = rad_arg_in(a, 1), *wt = rad_arg_in(a, 2), *gu = rad_arg_in(a, 3),
                    *down = rad_arg_in(a, 4);
    RadTensor* y = rad_arg_out(a, 5);
    if (!x || !ids || !wt || !gu || !down || !y || x->dtype != RAD_F32 || ids->dtype != RAD_I32 || wt->dtype != RAD_F32 ||
        y->dtype != RAD_F32 || gu->dtype != down->dtype)
        return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), d = rad_args_geti(a, "dim"), F = rad_args_geti(a, "ff"), E = rad_args_geti(a, "experts"),
                  k = rad_args_geti(a, "k");
    if (d <= 0 || F <= 0 || E <= 0 || k <= 0 || k > E || k > kMaxPick) return RAD_E_ARG;
    if (gu->rank != 2 || gu->shape[0] != E * 2 * F || gu->shape[1] != d) return RAD_E_SHAPE;
    if (down->rank != 2 || down->shape[0] != E * d || down->shape[1] != F) return RAD_E_SHAPE;
    if (n <= 0) return RAD_OK;
    if (!a->scratch || a->scratch_bytes < scratch_bytes(n, d, F, E, k)) return RAD_E_NOMEM;
    const int64_t px = pitch_elems(x), pi = pitch_elems(ids), pw = pitch_elems(wt), py = pitch_elems(y);
    return with_float_type(gu->dtype, [&](auto tag) -> int {
        using W = decltype(tag);
        for (int64_t t0 = 0; t0 < n; t0 += kChunkRows) {
            const int64_t rows = n - t0 < kChunkRows ? n - t0 : kChunkRows;
            const MoeScratch s = carve(a->scratch, rows, E, k, F);
            const int rc = moe_chunk<W>(
                a, static_cast<const float*>(x->data) + t0 * px, px, static_cast<const int32_t*>(ids->data) + t0 * pi, pi,
                static_cast<const float*>(wt->data) + t0 * pw, pw, static_cast<const W*>(gu->data), static_cast<const W*>(down->data),
                static_cast<float*>(y->data) + t0 * py, py, rows, d, F, static_cast<int>(E), static_cast<int>(k), s);
            if (rc != RAD_OK) return rc;
        }
        return RAD_OK;
    });
}

}  // namespace gpu
