// k_elementwise.cu: embed, add, swiglu, geglu, gelu, softcap, gather_rows. Memory-bound row loops: one
// block per row band, threads across the row, f32 arithmetic as docs/OPS.md defines it.
#include <cmath>

#include "k_common.h"
#include "k_vec.h"

namespace gpu {
namespace {

// On the card a launch cannot wait to inspect ids, so an id outside the table writes a row of
// NaN, which the logits carry to the caller, instead of reading out of bounds.
// One table row into y (times scale) per x block, its 16-byte chunks (8 16-bit or 4 f32 values)
// one a thread across the y blocks, all of a thread's loads out before its first store: one round
// trip for the row. (A block walking a 4,096-wide bf16 row one value a thread at a time made 16
// dependent round trips, 10.4 us: the first kernel of every decode step, H200 timeline.)
template <typename W>
__global__ void k_embed(const int32_t* ids, const W* table, float* y, int64_t y_pitch, int64_t dim, int64_t vocab, float scale, bool vec) {
    constexpr int VN = 16 / static_cast<int>(sizeof(W));
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.x;
    const int64_t d0 = (static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x) * VN;
    if (d0 >= dim) return;
    const int32_t id = ids[i];
    float* out = y + i * y_pitch;
    float v[VN];
    if (id < 0 || id >= vocab) {
#pragma unroll
        for (int e = 0; e < VN; ++e) v[e] = NAN;
    } else {
        const W* row = table + static_cast<int64_t>(id) * dim + d0;
        if (vec) {  // d0 + VN <= dim and 16-byte aligned rows
            const uint4 raw = *reinterpret_cast<const uint4*>(row);
            const W* h = reinterpret_cast<const W*>(&raw);
#pragma unroll
            for (int e = 0; e < VN; ++e) v[e] = gpu_to_f32(h[e]) * scale;
        } else {
#pragma unroll
            for (int e = 0; e < VN; ++e) v[e] = d0 + e < dim ? gpu_to_f32(row[e]) * scale : 0.0f;
        }
    }
#pragma unroll
    for (int e = 0; e < VN; ++e)
        if (d0 + e < dim) out[d0 + e] = v[e];
}

__global__ void k_add(const float* a, int64_t pa, const float* b, int64_t pb, float* y, int64_t py, int64_t dim) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.y;
    for (int64_t d = blockIdx.x * blockDim.x + threadIdx.x; d < dim; d += gridDim.x * blockDim.x)
        y[i * py + d] = a[i * pa + d] + b[i * pb + d];
}

__device__ __forceinline__ float gelu_tanh(float v) {
    const float c = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * v * (1.0f + tanhf(c * (v + 0.044715f * v * v * v)));
}
__device__ __forceinline__ float gelu_erf(float v) { return 0.5f * v * (1.0f + erff(v * 0.7071067811865476f)); }

template <int Kind>  // 0 swiglu, 1 geglu
__global__ void k_glu(const float* x, int64_t px, float* y, int64_t py, int64_t dim) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.y;
    for (int64_t d = blockIdx.x * blockDim.x + threadIdx.x; d < dim; d += gridDim.x * blockDim.x) {
        const float g = x[i * px + d], u = x[i * px + dim + d];
        y[i * py + d] = (Kind == 0 ? silu(g) : gelu_tanh(g)) * u;
    }
}

// The same, 4 columns a thread by 16-byte loads and stores (dim, px and py multiples of 4, x and
// y 16-byte aligned): each value is computed exactly as in k_glu.
template <int Kind>
__global__ void k_glu4(const float* x, int64_t px, float* y, int64_t py, int64_t dim) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.y;
    for (int64_t d = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 4; d < dim;
         d += static_cast<int64_t>(gridDim.x) * blockDim.x * 4) {
        const float4 g = *reinterpret_cast<const float4*>(x + i * px + d), u = *reinterpret_cast<const float4*>(x + i * px + dim + d);
        auto act = [](float v) { return Kind == 0 ? silu(v) : gelu_tanh(v); };
        *reinterpret_cast<float4*>(y + i * py + d) = make_float4(act(g.x) * u.x, act(g.y) * u.y, act(g.z) * u.z, act(g.w) * u.w);
    }
}

__global__ void k_gelu(const float* x, int64_t px, float* y, int64_t py, int64_t dim, int tanh_form) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.y;
    for (int64_t d = blockIdx.x * blockDim.x + threadIdx.x; d < dim; d += gridDim.x * blockDim.x) {
        const float v = x[i * px + d];
        y[i * py + d] = tanh_form ? gelu_tanh(v) : gelu_erf(v);
    }
}

__global__ void k_softcap(const float* x, int64_t px, float* y, int64_t py, int64_t dim, float cap) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.y;
    for (int64_t d = blockIdx.x * blockDim.x + threadIdx.x; d < dim; d += gridDim.x * blockDim.x)
        y[i * py + d] = cap * tanhf(x[i * px + d] / cap);
}

__global__ void k_gather(const float* x, int64_t px, const int32_t* ids, float* y, int64_t py, int64_t dim) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.x;
    const int64_t src = ids[i];
    for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) y[i * py + d] = x[src * px + d];
}

// Grid for an [n, dim] row loop: rows on y, enough blocks on x to cover the row.
dim3 row_grid(int64_t n, int64_t dim) {
    return dim3(static_cast<unsigned>(ceil_div(dim, 256 * 4) > 0 ? ceil_div(dim, 256 * 4) : 1), static_cast<unsigned>(n));
}

}  // namespace

int launched() { return gpuGetLastError() == gpuSuccess ? RAD_OK : RAD_E_INTERNAL; }

int embed(const RadArgs* a) {
    const RadTensor *ids = rad_arg_in(a, 0), *table = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!ids || !table || !y || ids->dtype != RAD_I32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim"), vocab = rad_args_geti(a, "vocab");
    const float scale = static_cast<float>(rad_args_getf_or(a, "scale", 1.0));
    return with_float_type(table->dtype, [&](auto w) {
        using W = decltype(w);
        constexpr int64_t VN = 16 / static_cast<int64_t>(sizeof(W));
        const bool vec = dim % VN == 0 && reinterpret_cast<uintptr_t>(table->data) % 16 == 0;
        const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(ceil_div(dim, 256 * VN)));
        gpu_launch(k_embed<W>, grid, 256, 0, stream_of(a), static_cast<const int32_t*>(ids->data), static_cast<const W*>(table->data),
                   static_cast<float*>(y->data), pitch_elems(y), dim, vocab, scale, vec);
        return launched();
    });
}

int add(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *b = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!x || !b || !y || x->dtype != RAD_F32 || b->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    gpu_launch(k_add, row_grid(n, dim), 256, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
               static_cast<const float*>(b->data), pitch_elems(b), static_cast<float*>(y->data), pitch_elems(y), dim);
    return launched();
}

template <int Kind>
static int glu(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const bool vec = dim % 4 == 0 && pitch_elems(x) % 4 == 0 && pitch_elems(y) % 4 == 0 && reinterpret_cast<uintptr_t>(x->data) % 16 == 0 &&
                     reinterpret_cast<uintptr_t>(y->data) % 16 == 0;
    gpu_launch(vec ? k_glu4<Kind> : k_glu<Kind>, row_grid(n, dim), 256, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
               static_cast<float*>(y->data), pitch_elems(y), dim);
    return launched();
}
int swiglu(const RadArgs* a) { return glu<0>(a); }
int geglu(const RadArgs* a) { return glu<1>(a); }

int gelu(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const char* approx = rad_args_gets_or(a, "approx", "none");
    const int tanh_form = approx[0] == 't';
    gpu_launch(k_gelu, row_grid(n, dim), 256, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
               static_cast<float*>(y->data), pitch_elems(y), dim, tanh_form);
    return launched();
}

int softcap(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const float cap = static_cast<float>(rad_args_getf(a, "cap"));
    if (!(cap > 0.0f)) return RAD_E_ARG;
    if (n <= 0) return RAD_OK;
    gpu_launch(k_softcap, row_grid(n, dim), 256, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
               static_cast<float*>(y->data), pitch_elems(y), dim, cap);
    return launched();
}

int gather_rows(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *ids = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!x || !ids || !y || x->dtype != RAD_F32 || ids->dtype != RAD_I32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    gpu_launch(k_gather, static_cast<unsigned>(n), 256, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
               static_cast<const int32_t*>(ids->data), static_cast<float*>(y->data), pitch_elems(y), dim);
    return launched();
}

}  // namespace gpu
