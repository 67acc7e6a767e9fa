// k_vec.h: what the weight-streaming kernels share: 16-byte weight vectors widened to f32, and
// the gated MLP's activation.
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

}  // namespace gpu
