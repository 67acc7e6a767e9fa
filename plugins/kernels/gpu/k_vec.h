// k_vec.h: what the weight-streaming kernels share: 16-byte weight vectors widened to f32, their
// loads a step ahead and their products with x rows, and the gated MLP's activation.
#pragma once
#include "k_common.h"

namespace gpu {

template <typename W>
struct Vec;  // 16 bytes of weights
template <>
struct Vec<gpu_bf16> {
    static constexpr int kN = 8;
};
template <>
struct Vec<gpu_f16> {
    static constexpr int kN = 8;
};
template <>
struct Vec<float> {
    static constexpr int kN = 4;
};

template <typename W>
__device__ __forceinline__ void widen16(const uint4& raw, float* out) {
    if constexpr (sizeof(W) == 4) {
        out[0] = __uint_as_float(raw.x);
        out[1] = __uint_as_float(raw.y);
        out[2] = __uint_as_float(raw.z);
        out[3] = __uint_as_float(raw.w);
    } else {
        const W* h = reinterpret_cast<const W*>(&raw);
#pragma unroll
        for (int e = 0; e < 8; ++e) out[e] = gpu_to_f32(h[e]);
    }
}

__device__ __forceinline__ float silu(float v) { return v / (1.0f + expf(-v)); }

// U chunk steps of STEP chunks from `at`, 16 bytes of each weight row per step; with GUARD, steps
// at or past `chunks` read as zeros (the loop bound guarantees them otherwise).
template <int U, int R, int STEP, bool GUARD>
__device__ __forceinline__ void load_chunks(uint4 (&raw)[U][R], const uint4* const* wrow, int64_t at, int64_t chunks) {
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
        for (int r = 0; r < R; ++r) raw[u][r] = !GUARD || at + STEP * u < chunks ? __ldg(wrow[r] + at + STEP * u) : make_uint4(0, 0, 0, 0);
}

// A gemv's norm of its x rows (rms_norm_gemm): each x value times the norm weight (or 1 + it)
// as it is multiplied, and the sum of the squares of the x values it saw, row by row; the rows'
// 1 / rms scales the sums at the end.
template <typename W, int M>
struct RowNorm {
    const W* w;
    int unit;
    float ss[M];
};

// acc[m][r] += x row m's VN values of `chunk` times weight row r's 16 bytes raw[r], for every m
// and r (each accumulator sees the same additions in the same order in both gemv kernels). With
// a norm, the x values are weighted by the norm's weight first and their squares summed.
template <typename W, int M, int R, bool NORM = false>
__device__ __forceinline__ void accumulate(float (&acc)[M][R], const uint4 (&raw)[R], const float* __restrict__ x, int64_t px,
                                           int64_t chunk, RowNorm<W, M>* norm = nullptr) {
    constexpr int VN = Vec<W>::kN;
    float xv[M][VN];
#pragma unroll
    for (int m = 0; m < M; ++m) {
        const float4* xp = reinterpret_cast<const float4*>(x + m * px + chunk * VN);
#pragma unroll
        for (int q = 0; q < VN / 4; ++q) {
            const float4 t = __ldg(xp + q);
            xv[m][4 * q] = t.x;
            xv[m][4 * q + 1] = t.y;
            xv[m][4 * q + 2] = t.z;
            xv[m][4 * q + 3] = t.w;
        }
    }
    if constexpr (NORM) {
        float g[VN];
        widen16<W>(__ldg(reinterpret_cast<const uint4*>(norm->w) + chunk), g);
#pragma unroll
        for (int m = 0; m < M; ++m)
#pragma unroll
            for (int e = 0; e < VN; ++e) {
                norm->ss[m] += xv[m][e] * xv[m][e];
                xv[m][e] *= norm->unit ? 1.0f + g[e] : g[e];
            }
    }
#pragma unroll
    for (int r = 0; r < R; ++r) {
        float wv[VN];
        widen16<W>(raw[r], wv);
#pragma unroll
        for (int m = 0; m < M; ++m)
#pragma unroll
            for (int e = 0; e < VN; ++e) acc[m][r] += xv[m][e] * wv[e];
    }
}

// A block gemv's per-warp partial sums: each accumulator summed over the warp, lane 0 storing it
// at slot m * R + r of its warp's row of `part` (the block then adds the warps' rows).
template <int M, int R, int SLOTS>
__device__ __forceinline__ void store_warp_sums(const float (&acc)[M][R], float (*part)[SLOTS], int warp, int lane) {
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float v = gpu_warp_sum(acc[m][r]);
            if (lane == 0) part[warp][m * R + r] = v;
        }
}

}  // namespace gpu
