// k_common.h: what every libgpu kernel file shares: operand views and dtype dispatch.
#pragma once
#include <cstdlib>

#include <radiance/kernels/gpu_runtime.h>
#include <radiance/rad_plugin.h>

#include "gpu_kernels.h"

namespace gpu {

inline gpuStream_t stream_of(const RadArgs* a) { return reinterpret_cast<gpuStream_t>(a->stream); }

// Row pitch of an activation in elements of its dtype (the engine's views may be wider than their extent).
inline int64_t pitch_elems(const RadTensor* t) {
    const int64_t bytes = rad_tensor_row_pitch(t);
    return bytes / (rad_dtype_bits(t->dtype) / 8);
}

// Calls f.template operator()<T>() with T the C++ type of a float dtype; RAD_E_DTYPE otherwise.
template <typename F>
int with_float_type(int dtype, F&& f) {
    switch (dtype) {
    case RAD_F32: return f(float{});
    case RAD_BF16: return f(gpu_bf16{});
    case RAD_F16: return f(gpu_f16{});
    default: return RAD_E_DTYPE;
    }
}

// A whole-number switch from the environment (docs/SETTINGS.md): unset or empty gives `fallback`.
inline int env_int(const char* name, int fallback = 0) {
    const char* e = std::getenv(name);
    return e && *e ? std::atoi(e) : fallback;
}

constexpr int ceil_div(int64_t a, int64_t b) { return static_cast<int>((a + b - 1) / b); }

}  // namespace gpu
