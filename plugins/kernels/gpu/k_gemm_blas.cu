// k_gemm_blas.cu: the many-row gemm. On CUDA, cuBLASLt: x is narrowed to the weights' 16-bit
// type in scratch (f32 weights use x as it is, in full f32 arithmetic, no TF32), the product
// accumulates in f32 and lands in y as f32. Elsewhere (HIP builds, where Debian ships no
// hipBLASLt), a tiled kernel computes the same function more slowly.
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "k_blas.h"
#include "k_common.h"

#if RAD_GPU_CUDA
#include <cublasLt.h>
#endif

namespace gpu {
namespace {

constexpr uint64_t kWorkspace = kBlasWorkspace;

template <typename T>
__global__ void k_narrow(const float* x, int64_t px, T* out, int64_t K) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t m = blockIdx.y;
    for (int64_t k = blockIdx.x * blockDim.x + threadIdx.x; k < K; k += gridDim.x * blockDim.x) {
        if constexpr (sizeof(T) == 2 && std::is_same_v<T, gpu_bf16>)
            out[m * K + k] = gpu_f32_to_bf16(x[m * px + k]);
        else
            out[m * K + k] = gpu_f32_to_f16(x[m * px + k]);
    }
}

// The same, 8 values a thread: two 16-byte loads, one 16-byte store (K % 8 == 0, px % 4 == 0, x
// 16-byte aligned). One value a thread left ~2 KiB in flight an SM at a time; a 4,096-token
// prefill narrows ~0.65 GB a layer before its four cuBLASLt products.
template <typename T>
__global__ void k_narrow8(const float* x, int64_t px, T* out, int64_t K) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t m = blockIdx.y;
    for (int64_t k = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 8; k < K;
         k += static_cast<int64_t>(gridDim.x) * blockDim.x * 8) {
        const float4 a = *reinterpret_cast<const float4*>(x + m * px + k), b = *reinterpret_cast<const float4*>(x + m * px + k + 4);
        const float v[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
        union {
            T h[8];
            uint4 u;
        } o;
#pragma unroll
        for (int e = 0; e < 8; ++e) {
            if constexpr (std::is_same_v<T, gpu_bf16>)
                o.h[e] = gpu_f32_to_bf16(v[e]);
            else
                o.h[e] = gpu_f32_to_f16(v[e]);
        }
        *reinterpret_cast<uint4*>(out + m * K + k) = o.u;
    }
}

template <typename W>
__global__ void k_add_bias(float* y, int64_t py, const W* bias, int64_t N) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t m = blockIdx.y;
    for (int64_t n = blockIdx.x * blockDim.x + threadIdx.x; n < N; n += gridDim.x * blockDim.x) y[m * py + n] += gpu_to_f32(bias[n]);
}

// The portable path: 64x64 tiles of y, 16-deep slices of K through shared memory, 4x4 per thread.
template <typename W>
__global__ void k_gemm_tiled(const float* x, int64_t px, const W* w, float* y, int64_t py, int64_t M, int64_t N, int64_t K) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float xs[16][64 + 1], ws[16][64 + 1];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int64_t m0 = static_cast<int64_t>(blockIdx.y) * 64, n0 = static_cast<int64_t>(blockIdx.x) * 64;
    float acc[4][4] = {};
    for (int64_t k0 = 0; k0 < K; k0 += 16) {
        for (int e = threadIdx.x; e < 16 * 64; e += blockDim.x) {
            const int kk = e % 16, r = e / 16;
            const int64_t k = k0 + kk;
            xs[kk][r] = (m0 + r < M && k < K) ? x[(m0 + r) * px + k] : 0.0f;
            ws[kk][r] = (n0 + r < N && k < K) ? gpu_to_f32(w[(n0 + r) * K + k]) : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < 16; ++kk)
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += xs[kk][ty * 4 + i] * ws[kk][tx * 4 + j];
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int64_t m = m0 + ty * 4 + i, n = n0 + tx * 4 + j;
            if (m < M && n < N) y[m * py + n] = acc[i][j];
        }
}

#if RAD_GPU_CUDA
cublasLtHandle_t blas_handle() {
    static cublasLtHandle_t h = [] {
        cublasLtHandle_t t = nullptr;
        return cublasLtCreate(&t) == CUBLAS_STATUS_SUCCESS ? t : nullptr;
    }();
    return h;
}

struct LtCall {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    ~LtCall() {
        if (op) cublasLtMatmulDescDestroy(op);
        if (a) cublasLtMatrixLayoutDestroy(a);
        if (b) cublasLtMatrixLayoutDestroy(b);
        if (d) cublasLtMatrixLayoutDestroy(d);
    }
};

// y (column-major N x M, ld py) = w^T (w column-major K x N, ld K) . xb (column-major K x M, ld ldb),
// plus y's own values where accumulate (beta 1: the epilogue's one rounding of y + product is
// the add kernel's).
int lt_matmul(cudaDataType_t wt, const void* w, const void* xb, int64_t ldb, float* y, int64_t py, int64_t M, int64_t N, int64_t K,
              void* workspace, gpuStream_t s, bool accumulate = false) {
    cublasLtHandle_t h = blas_handle();
    if (!h) return RAD_E_INTERNAL;
    LtCall c;
    const cublasComputeType_t compute = CUBLAS_COMPUTE_32F;  // f32 accumulation; f32 inputs stay f32 (no TF32)
    if (cublasLtMatmulDescCreate(&c.op, compute, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return RAD_E_INTERNAL;
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
    cublasLtMatmulDescSetAttribute(c.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
    if (cublasLtMatrixLayoutCreate(&c.a, wt, K, N, K) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&c.b, wt, K, M, ldb) != CUBLAS_STATUS_SUCCESS ||
        cublasLtMatrixLayoutCreate(&c.d, CUDA_R_32F, N, M, py) != CUBLAS_STATUS_SUCCESS)
        return RAD_E_INTERNAL;
    // Heuristics are asked once per shape; the answer is reused (and recorded in graphs).
    static std::mutex mu;
    static std::map<std::tuple<int, int64_t, int64_t, int64_t, int64_t, int64_t>, cublasLtMatmulAlgo_t> cache;
    const auto key = std::make_tuple(static_cast<int>(wt), M, N, K, ldb, py);
    cublasLtMatmulAlgo_t algo{};
    {
        std::lock_guard<std::mutex> lock(mu);
        auto it = cache.find(key);
        if (it == cache.end()) {
            cublasLtMatmulPreference_t pref = nullptr;
            cublasLtMatmulPreferenceCreate(&pref);
            const uint64_t ws = kWorkspace;
            cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
            cublasLtMatmulHeuristicResult_t res{};
            int found = 0;
            const auto st = cublasLtMatmulAlgoGetHeuristic(h, c.op, c.a, c.b, c.d, c.d, pref, 1, &res, &found);
            cublasLtMatmulPreferenceDestroy(pref);
            if (st != CUBLAS_STATUS_SUCCESS || found == 0) return RAD_E_UNSUPPORTED;
            it = cache.emplace(key, res.algo).first;
        }
        algo = it->second;
    }
    const float one = 1.0f, zero = 0.0f;
    const auto st =
        cublasLtMatmul(h, c.op, &one, w, c.a, xb, c.b, accumulate ? &one : &zero, y, c.d, y, c.d, &algo, workspace, kWorkspace, s);
    return st == CUBLAS_STATUS_SUCCESS ? RAD_OK : RAD_E_INTERNAL;
}
#endif

// accumulate (gemm_add without a bias): y += the product through cuBLASLt's beta, where it runs;
// RAD_E_UNSUPPORTED otherwise, before anything is written to y.
template <typename W>
int blas(const RadArgs* a, const RadTensor* x, const RadTensor* w, const RadTensor* bias, RadTensor* y, int64_t M, int64_t N, int64_t K,
         bool accumulate = false) {
    gpuStream_t s = stream_of(a);
    const auto* xp = static_cast<const float*>(x->data);
    auto* yp = static_cast<float*>(y->data);
    const int64_t px = pitch_elems(x), py = pitch_elems(y);
    int rc = RAD_E_UNSUPPORTED;
#if RAD_GPU_CUDA
    auto* ws = static_cast<uint8_t*>(a->scratch);
    if (ws && a->scratch_bytes >= kWorkspace) {
        if constexpr (std::is_same_v<W, float>) {
            rc = lt_matmul(CUDA_R_32F, w->data, xp, px, yp, py, M, N, K, ws, s, accumulate);
        } else {
            const uint64_t xb_bytes = (static_cast<uint64_t>(M * K) * 2 + 255) / 256 * 256;
            if (kWorkspace + xb_bytes <= a->scratch_bytes) {
                W* xb = reinterpret_cast<W*>(ws + kWorkspace);
                if (K % 8 == 0 && px % 4 == 0 && reinterpret_cast<uintptr_t>(xp) % 16 == 0)
                    gpu_launch(k_narrow8<W>, dim3(static_cast<unsigned>(ceil_div(K, 256 * 8)), static_cast<unsigned>(M)), 256, 0, s, xp, px,
                               xb, K);
                else
                    gpu_launch(k_narrow<W>, dim3(static_cast<unsigned>(ceil_div(K, 1024)), static_cast<unsigned>(M)), 256, 0, s, xp, px, xb,
                               K);
                rc = lt_matmul(std::is_same_v<W, gpu_bf16> ? CUDA_R_16BF : CUDA_R_16F, w->data, xb, K, yp, py, M, N, K, ws, s, accumulate);
            }
        }
    }
#endif
    if (accumulate) return rc == RAD_OK ? launched() : RAD_E_UNSUPPORTED;
    if (rc != RAD_OK)
        gpu_launch(k_gemm_tiled<W>, dim3(static_cast<unsigned>(ceil_div(N, 64)), static_cast<unsigned>(ceil_div(M, 64))), 256, 0, s, xp, px,
                   static_cast<const W*>(w->data), yp, py, M, N, K);
    if (bias)
        gpu_launch(k_add_bias<W>, dim3(static_cast<unsigned>(ceil_div(N, 1024)), static_cast<unsigned>(M)), 256, 0, s, yp, py,
                   static_cast<const W*>(bias->data), N);
    return launched();
}

}  // namespace

// gemm_q's many rows (k_blas.h): a bf16 slab of dequantised weight rows times x.
void narrow_to_bf16(const float* x, int64_t px, gpu_bf16* out, int64_t M, int64_t K, gpuStream_t s) {
    if (K % 8 == 0 && px % 4 == 0 && reinterpret_cast<uintptr_t>(x) % 16 == 0)
        gpu_launch(k_narrow8<gpu_bf16>, dim3(static_cast<unsigned>(ceil_div(K, 256 * 8)), static_cast<unsigned>(M)), 256, 0, s, x, px, out, K);
    else
        gpu_launch(k_narrow<gpu_bf16>, dim3(static_cast<unsigned>(ceil_div(K, 1024)), static_cast<unsigned>(M)), 256, 0, s, x, px, out, K);
}

int slab_product_bf16(const float* x, int64_t px, const gpu_bf16* xb, const gpu_bf16* w, float* y, int64_t py, int64_t M, int64_t N,
                      int64_t K, void* workspace, gpuStream_t s) {
    int rc = RAD_E_UNSUPPORTED;
#if RAD_GPU_CUDA
    if (xb && workspace) rc = lt_matmul(CUDA_R_16BF, w, xb, K, y, py, M, N, K, workspace, s);
#else
    (void)xb;
    (void)workspace;
#endif
    if (rc != RAD_OK && !x) return RAD_E_UNSUPPORTED;  // the caller has only xb (gemm_q's gathered x)
    if (rc != RAD_OK)
        gpu_launch(k_gemm_tiled<gpu_bf16>, dim3(static_cast<unsigned>(ceil_div(N, 64)), static_cast<unsigned>(ceil_div(M, 64))), 256, 0, s, x,
                   px, w, y, py, M, N, K);
    return launched();
}

uint64_t gemm_blas_scratch(const RadArgs* geom) {
    const int64_t M = rad_args_geti(geom, "M"), K = rad_args_geti(geom, "K");
    return kWorkspace + (static_cast<uint64_t>(M * K) * 2 + 255) / 256 * 256;
}

int gemm_blas(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *bias = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!x || !w || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32 || (bias && bias->dtype != w->dtype)) return RAD_E_DTYPE;
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N"), K = rad_args_geti(a, "K");
    return with_float_type(w->dtype, [&](auto t) { return blas<decltype(t)>(a, x, w, bias, y, M, N, K); });
}

int gemm_blas_add(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *bias = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (bias) return RAD_E_UNSUPPORTED;  // the chain adds the bias before the residual: its own rounding
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N"), K = rad_args_geti(a, "K");
    return with_float_type(w->dtype, [&](auto t) { return blas<decltype(t)>(a, x, w, nullptr, y, M, N, K, true); });
}

}  // namespace gpu
