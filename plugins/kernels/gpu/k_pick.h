// k_pick.h: choosing the best logit, shared by argmax and the samplers: how NaN and infinities
// rank, the (value, index) order and a block's best.
#pragma once
#include <cfloat>
#include <climits>
#include <cmath>

#include "k_common.h"

namespace gpu::pick {

// NaN loses to everything and +inf ties with the largest float, as the host sampler maps them.
__device__ __forceinline__ float sane(float v) { return v != v ? -INFINITY : (v == INFINITY ? FLT_MAX : v); }

// (value, index) pairs: larger value wins, equal values keep the lower index.
__device__ __forceinline__ void better(float& v, int& i, float v2, int i2) {
    if (v2 > v || (v2 == v && i2 < i)) {
        v = v2;
        i = i2;
    }
}

// Structured output's mask row (null: none): whether token j may be picked (a clear bit counts as -inf).
__device__ __forceinline__ bool allowed(const uint32_t* mask, int64_t j) { return !mask || ((mask[j >> 5] >> (j & 31)) & 1u); }

// The block's best (value, index) over every thread's pair; every thread gets it. `sv`/`si` hold
// one entry per warp.
__device__ inline void block_best(float& v, int& idx, float* sv, int* si) {
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) better(v, idx, gpu_shfl_xor(v, m), gpu_shfl_xor(idx, m));
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    if (lane == 0) {
        sv[warp] = v;
        si[warp] = idx;
    }
    __syncthreads();
    v = sv[0];
    idx = si[0];
    for (int w = 1; w < static_cast<int>(blockDim.x) / kWarpSize; ++w) better(v, idx, sv[w], si[w]);
    __syncthreads();  // sv/si may be reused at once
}

}  // namespace gpu::pick
