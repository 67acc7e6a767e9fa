// k_norm.cu: rms_norm (with groups and Gemma's unit offset) and layer_norm. One block of 256
// threads per vector for wide rows, one warp per vector for per-head norms (dim <= 256).
#include "k_common.h"

namespace gpu {
namespace {

__device__ float block_sum(float v, float* red) {
    v = gpu_warp_sum(v);
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    __syncthreads();  // red may still be read by an earlier call
    if (lane == 0) red[warp] = v;
    __syncthreads();
    float t = 0.0f;
    for (int w = 0; w < static_cast<int>(blockDim.x) / kWarpSize; ++w) t += red[w];
    return t;
}

template <typename W>
__global__ void k_rms_block(const float* x, int64_t px, const W* w, float* y, int64_t py, int64_t dim, int groups, float eps,
                            int unit_offset) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float red[32];
    const int64_t row = blockIdx.x / groups, g = blockIdx.x % groups;
    const float* v = x + row * px + g * dim;
    float* out = y + row * py + g * dim;
    float ss = 0.0f;
    for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) ss += v[d] * v[d];
    const float r = 1.0f / sqrtf(block_sum(ss, red) / static_cast<float>(dim) + eps);
    for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) {
        const float wv = gpu_to_f32(w[d]);
        out[d] = (v[d] * r) * (unit_offset ? 1.0f + wv : wv);
    }
}

// add_rms_norm: x += r, then y = rms_norm(x), in one launch with the chain's arithmetic in the
// chain's order (the same threads per row as rms_norm picks, each summing its strided values),
// so it is byte-identical to add followed by rms_norm (its `replaces`).
template <typename W>
__global__ void __launch_bounds__(1024) k_add_rms_block(float* x, int64_t px, const float* r, int64_t pr, const W* w, float* y, int64_t py,
                                                        int64_t dim, float eps, int unit_offset) {
    // A thread's first kKeep values stay in registers between the two passes, and their weights
    // load before the wait for the previous kernel (they are no kernel's output): one global
    // round trip fewer on the decode path, where this runs as one block twice a layer.
    constexpr int kKeep = 8;
    const int64_t row = blockIdx.x, T = blockDim.x;
    float wk[kKeep], sk[kKeep];
#pragma unroll
    for (int i = 0; i < kKeep; ++i) {
        const int64_t d = threadIdx.x + i * T;
        wk[i] = d < dim ? gpu_to_f32(w[d]) : 0.0f;
    }
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float red[32];
    float* v = x + row * px;
    const float* rv = r + row * pr;
    float* out = y + row * py;
    float ss = 0.0f;
#pragma unroll
    for (int i = 0; i < kKeep; ++i) {
        const int64_t d = threadIdx.x + i * T;
        if (d < dim) {
            const float s = v[d] + rv[d];
            v[d] = s;
            ss += s * s;
            sk[i] = s;
        }
    }
    for (int64_t d = threadIdx.x + kKeep * T; d < dim; d += T) {
        const float s = v[d] + rv[d];
        v[d] = s;
        ss += s * s;
    }
    const float rs = 1.0f / sqrtf(block_sum(ss, red) / static_cast<float>(dim) + eps);
#pragma unroll
    for (int i = 0; i < kKeep; ++i) {
        const int64_t d = threadIdx.x + i * T;
        if (d < dim) out[d] = (sk[i] * rs) * (unit_offset ? 1.0f + wk[i] : wk[i]);
    }
    for (int64_t d = threadIdx.x + kKeep * T; d < dim; d += T) {
        const float wv = gpu_to_f32(w[d]);
        out[d] = (v[d] * rs) * (unit_offset ? 1.0f + wv : wv);
    }
}

// The same with a warp per row, for rows as short as rms_norm serves by warps (dim <= 256).
template <typename W>
__global__ void k_add_rms_warp(float* x, int64_t px, const float* r, int64_t pr, const W* w, float* y, int64_t py, int64_t dim,
                               int64_t rows, float eps, int unit_offset) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t row = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
    if (row >= rows) return;
    const int lane = threadIdx.x % kWarpSize;
    float* v = x + row * px;
    const float* rv = r + row * pr;
    float* out = y + row * py;
    float ss = 0.0f;
    for (int64_t d = lane; d < dim; d += kWarpSize) {
        const float s = v[d] + rv[d];
        v[d] = s;
        ss += s * s;
    }
    const float rs = 1.0f / sqrtf(gpu_warp_sum(ss) / static_cast<float>(dim) + eps);
    for (int64_t d = lane; d < dim; d += kWarpSize) {
        const float wv = gpu_to_f32(w[d]);
        out[d] = (v[d] * rs) * (unit_offset ? 1.0f + wv : wv);
    }
}

// One warp per vector: per-head q/k norms have many short vectors.
template <typename W>
__global__ void k_rms_warp(const float* x, int64_t px, const W* w, float* y, int64_t py, int64_t dim, int groups, int64_t vectors,
                           float eps, int unit_offset) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t vec = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
    if (vec >= vectors) return;
    const int lane = threadIdx.x % kWarpSize;
    const int64_t row = vec / groups, g = vec % groups;
    const float* v = x + row * px + g * dim;
    float* out = y + row * py + g * dim;
    float ss = 0.0f;
    for (int64_t d = lane; d < dim; d += kWarpSize) ss += v[d] * v[d];
    const float r = 1.0f / sqrtf(gpu_warp_sum(ss) / static_cast<float>(dim) + eps);
    for (int64_t d = lane; d < dim; d += kWarpSize) {
        const float wv = gpu_to_f32(w[d]);
        out[d] = (v[d] * r) * (unit_offset ? 1.0f + wv : wv);
    }
}

template <typename W>
__global__ void k_layer_norm(const float* x, int64_t px, const W* w, const W* b, float* y, int64_t py, int64_t dim, float eps) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float red[32];
    const int64_t row = blockIdx.x;
    const float* v = x + row * px;
    float* out = y + row * py;
    float s = 0.0f;
    for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) s += v[d];
    const float mean = block_sum(s, red) / static_cast<float>(dim);
    float ss = 0.0f;
    for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) ss += (v[d] - mean) * (v[d] - mean);
    const float r = 1.0f / sqrtf(block_sum(ss, red) / static_cast<float>(dim) + eps);
    for (int64_t d = threadIdx.x; d < dim; d += blockDim.x) out[d] = (v[d] - mean) * r * gpu_to_f32(w[d]) + (b ? gpu_to_f32(b[d]) : 0.0f);
}

}  // namespace

int rms_norm(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!x || !w || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const int groups = static_cast<int>(rad_args_geti_or(a, "groups", 1));
    const float eps = static_cast<float>(rad_args_getf(a, "eps"));
    const int unit = static_cast<int>(rad_args_geti_or(a, "unit_offset", 0));
    return with_float_type(w->dtype, [&](auto t) {
        using W = decltype(t);
        const auto* xp = static_cast<const float*>(x->data);
        auto* yp = static_cast<float*>(y->data);
        if (dim <= 256) {
            const int64_t vectors = n * groups;
            gpu_launch(k_rms_warp<W>, static_cast<unsigned>(ceil_div(vectors, 8)), 256, 0, stream_of(a), xp, pitch_elems(x),
                       static_cast<const W*>(w->data), yp, pitch_elems(y), dim, groups, vectors, eps, unit);
        } else {
            // Few vectors (decode): wide blocks, so one vector's latency is spread over 1024 threads.
            const int threads = n * groups < 264 ? 1024 : 256;
            gpu_launch(k_rms_block<W>, static_cast<unsigned>(n * groups), threads, 0, stream_of(a), xp, pitch_elems(x),
                       static_cast<const W*>(w->data), yp, pitch_elems(y), dim, groups, eps, unit);
        }
        return launched();
    });
}

int add_rms_norm(const RadArgs* a) {
    RadTensor *x = rad_arg_out(a, 0), *y = rad_arg_out(a, 3);
    const RadTensor *r = rad_arg_in(a, 1), *w = rad_arg_in(a, 2);
    if (!x || !r || !w || !y || x->dtype != RAD_F32 || r->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const float eps = static_cast<float>(rad_args_getf(a, "eps"));
    const int unit = static_cast<int>(rad_args_geti_or(a, "unit_offset", 0));
    return with_float_type(w->dtype, [&](auto t) {
        using W = decltype(t);
        auto* xp = static_cast<float*>(x->data);
        const auto* rp = static_cast<const float*>(r->data);
        auto* yp = static_cast<float*>(y->data);
        if (dim <= 256) {  // rms_norm's warp-per-vector shape
            gpu_launch(k_add_rms_warp<W>, static_cast<unsigned>(ceil_div(n, 8)), 256, 0, stream_of(a), xp, pitch_elems(x), rp,
                       pitch_elems(r), static_cast<const W*>(w->data), yp, pitch_elems(y), dim, n, eps, unit);
        } else {  // rms_norm's block shape: 1024 threads for few rows, 256 for many
            const int threads = n < 264 ? 1024 : 256;
            gpu_launch(k_add_rms_block<W>, static_cast<unsigned>(n), threads, 0, stream_of(a), xp, pitch_elems(x), rp, pitch_elems(r),
                       static_cast<const W*>(w->data), yp, pitch_elems(y), dim, eps, unit);
        }
        return launched();
    });
}

int layer_norm(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *b = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!x || !w || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32 || (b && b->dtype != w->dtype)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const float eps = static_cast<float>(rad_args_getf(a, "eps"));
    return with_float_type(w->dtype, [&](auto t) {
        using W = decltype(t);
        gpu_launch(k_layer_norm<W>, static_cast<unsigned>(n), 256, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
                   static_cast<const W*>(w->data), b ? static_cast<const W*>(b->data) : nullptr, static_cast<float*>(y->data),
                   pitch_elems(y), dim, eps);
        return launched();
    });
}

}  // namespace gpu
