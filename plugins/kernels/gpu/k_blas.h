// k_blas.h: the many-row product as other kernel files use it (k_gemm_blas.cu): gemm_q's
// dequantised weight slabs go through the same cuBLASLt call as gemm's bf16 weights.
#pragma once
#include <cstdint>

#include "k_common.h"

namespace gpu {

// cuBLASLt's workspace at the head of a many-row product's scratch.
constexpr uint64_t kBlasWorkspace = 32ull << 20;

// x ([M, K] f32, pitch px) rounded to bf16 into out ([M, K], dense), on s.
void narrow_to_bf16(const float* x, int64_t px, gpu_bf16* out, int64_t M, int64_t K, gpuStream_t s);

// y[:, 0..N) = x . w^T for a dense bf16 w ([N, K]): cuBLASLt on xb (x narrowed) with a
// kBlasWorkspace workspace where it runs, else the portable tiled kernel on x (RAD_E_UNSUPPORTED
// where x is null).
int slab_product_bf16(const float* x, int64_t px, const gpu_bf16* xb, const gpu_bf16* w, float* y, int64_t py, int64_t M, int64_t N,
                      int64_t K, void* workspace, gpuStream_t s);

}  // namespace gpu
