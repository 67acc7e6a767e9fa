// k_sample.cu: greedy sampling where the logits are. One block per row finds the lowest index of
// the largest value (the sampler's strict-> rule), so only a token id per row crosses to the host.
#include <cfloat>
#include <climits>

#include "k_common.h"

namespace gpu {
namespace {

// (value, index) pairs: larger value wins, equal values keep the lower index, NaN never wins.
__device__ __forceinline__ void better(float& v, int& i, float v2, int i2) {
    if (v2 > v || (v2 == v && i2 < i)) {
        v = v2;
        i = i2;
    }
}

__global__ void k_argmax(const float* x, int64_t px, int32_t* y, int64_t vocab) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float sv[32];
    __shared__ int si[32];
    const float* row = x + blockIdx.x * px;
    float v = -FLT_MAX;
    int idx = INT_MAX;
    for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) better(v, idx, row[j], static_cast<int>(j));
    if (idx == INT_MAX) idx = 0;
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) better(v, idx, gpu_shfl_xor(v, m), gpu_shfl_xor(idx, m));
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    if (lane == 0) {
        sv[warp] = v;
        si[warp] = idx;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < static_cast<int>(blockDim.x) / kWarpSize; ++w) better(v, idx, sv[w], si[w]);
        // A NaN at index 0 is never beaten under the sampler's rule (every comparison with it is
        // false), and a row with nothing above -FLT_MAX left idx at 0 already.
        y[blockIdx.x] = row[0] != row[0] ? 0 : idx;
    }
}

}  // namespace

int argmax(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), vocab = rad_args_geti(a, "vocab");
    gpu_launch(k_argmax, static_cast<unsigned>(n), 1024, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
                                                                   static_cast<int32_t*>(y->data), vocab);
    return launched();
}

}  // namespace gpu
