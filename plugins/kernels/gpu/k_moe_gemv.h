// k_moe_gemv.h: moe_mlp for few (row, pick) pairs (decode): weight-streaming gemvs that read only
// the routed experts' rows, with k_gemm's loads and products (k_vec.h). Both kernels read the
// router's ids, so no weight load can go out before the wait for the previous kernel; instead
// every lane keeps U steps of 16-byte loads of R rows in flight.
#pragma once
#include "k_vec.h"

namespace gpu {
namespace moe {

constexpr int kMaxPick = 16;  // picks a row at most (the combine's sort, the down kernel's slots)

// The pair's expert, or -1 for an id outside [0, E) (that pair adds nothing).
__device__ __forceinline__ int expert_of(const int32_t* ids, int64_t pi, int k, int64_t pair, int E) {
    const int e = ids[(pair / k) * pi + pair % k];
    return e >= 0 && e < E ? e : -1;
}

// rows [lo, hi) of 16-byte chunks of the R weight rows against x, lane-strided, U steps a batch.
template <typename W, int R, int U>
__device__ __forceinline__ void stream_rows(float (&acc)[1][R], const uint4* const (&wrow)[R], const float* x, int64_t lo, int64_t hi,
                                            int lane) {
    int64_t c = lo + lane;
    for (; c + kWarpSize * (U - 1) < hi; c += kWarpSize * U) {
        uint4 raw[U][R];
        load_chunks<U, R, kWarpSize, false>(raw, wrow, c, hi);
#pragma unroll
        for (int u = 0; u < U; ++u) accumulate<W, 1, R>(acc, raw[u], x, 0, c + kWarpSize * u);
    }
    for (; c < hi; c += kWarpSize) {
        uint4 raw[1][R];
        load_chunks<1, R, kWarpSize, false>(raw, wrow, c, hi);
        accumulate<W, 1, R>(acc, raw[0], x, 0, c);
    }
}

// act[pair, f] = silu(gate_f . x) * (up_f . x): a warp per two columns f of pair blockIdx.y, its
// two gate rows and their up rows (R = 4), four steps (16 loads) in flight a lane.
template <typename W>
__global__ void __launch_bounds__(256)
    k_moe_gemv_gu(const float* __restrict__ x, int64_t px, const int32_t* ids, int64_t pi, const W* __restrict__ gu,
                  float* __restrict__ act, int64_t d, int64_t F, int E, int k) {
    constexpr int COLS = 2, R = 2 * COLS, U = 4, VN = Vec<W>::kN;
    gpu_grid_wait();
    gpu_grid_release();
    const int lane = threadIdx.x % kWarpSize;
    const int64_t pair = blockIdx.y;
    const int64_t f0 = (static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize) * COLS;
    const int e = expert_of(ids, pi, k, pair, E);
    if (f0 >= F || e < 0) return;
    const W* base = gu + static_cast<int64_t>(e) * 2 * F * d;
    const uint4* wrow[R];
#pragma unroll
    for (int r = 0; r < COLS; ++r) {  // past the last column: row F - 1 again (its result is dropped)
        const int64_t f = min(f0 + r, F - 1);
        wrow[r] = reinterpret_cast<const uint4*>(base + f * d);
        wrow[r + COLS] = reinterpret_cast<const uint4*>(base + (F + f) * d);
    }
    float acc[1][R] = {};
    stream_rows<W, R, U>(acc, wrow, x + (pair / k) * px, 0, d / VN, lane);
#pragma unroll
    for (int r = 0; r < COLS; ++r) {
        const float g = gpu_warp_sum(acc[0][r]), u = gpu_warp_sum(acc[0][r + COLS]);
        if (lane == 0 && f0 + r < F) act[pair * F + f0 + r] = silu(g) * u;
    }
}

// y[t, c] = the sum over row t's picks, in ascending expert order, of w_j * (down row c of e_j .
// act[t, j]): the products and the combine in one kernel. A block per R = 8 columns of row
// blockIdx.y; its warps take (pick, slice) tasks, S slices of the width a pick (S = 8 / k, at least
// one) so that few picks still keep every warp streaming; the partial sums meet in shared memory
// and are added in the definition's order (no atomics).
template <typename W>
__global__ void __launch_bounds__(256)
    k_moe_gemv_down(const float* __restrict__ act, const int32_t* ids, int64_t pi, const float* wt, int64_t pw, const W* __restrict__ down,
                    float* __restrict__ y, int64_t py, int64_t d, int64_t F, int E, int k) {
    constexpr int R = 8, WARPS = 8, U = 2, VN = Vec<W>::kN;
    __shared__ float part[kMaxPick][R];
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t t = blockIdx.y, c0 = static_cast<int64_t>(blockIdx.x) * R;
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    const int S = k >= WARPS ? 1 : WARPS / k, tasks = k * S;
    const int64_t chunks = F / VN, per = (chunks + S - 1) / S;
    for (int task = warp; task < tasks; task += WARPS) {
        const int j = task / S, s = task % S;
        const int e = ids[t * pi + j];
        float acc[1][R] = {};
        if (e >= 0 && e < E) {
            const uint4* wrow[R];
#pragma unroll
            for (int r = 0; r < R; ++r)
                wrow[r] = reinterpret_cast<const uint4*>(down + (static_cast<int64_t>(e) * d + min(c0 + r, d - 1)) * F);
            stream_rows<W, R, U>(acc, wrow, act + (t * k + j) * F, s * per, min(chunks, (s + 1) * per), lane);
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float v = gpu_warp_sum(acc[0][r]);
            if (lane == 0) part[task][r] = v;
        }
    }
    __syncthreads();
    const int r = threadIdx.x;
    if (r >= R || c0 + r >= d) return;
    int order[kMaxPick];
    int m = 0;
    for (int j = 0; j < k; ++j) {  // insertion by expert id; ids out of range add nothing
        const int e = ids[t * pi + j];
        if (e < 0 || e >= E) continue;
        int at = m++;
        while (at > 0 && ids[t * pi + order[at - 1]] > e) {
            order[at] = order[at - 1];
            --at;
        }
        order[at] = j;
    }
    float sum = 0.0f;
    for (int i = 0; i < m; ++i) {
        const int j = order[i];
        float dot = 0.0f;
        for (int s = 0; s < S; ++s) dot += part[j * S + s][r];
        sum += dot * wt[t * pw + j];
    }
    y[t * py + c0 + r] = sum;
}

}  // namespace moe
}  // namespace gpu
