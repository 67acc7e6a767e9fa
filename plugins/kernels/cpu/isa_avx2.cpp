// isa_avx2.cpp: level 1, every kernel body over 8-lane AVX2 vectors with FMA and F16C. Only
// the functions (by their target attribute) use these instructions; the file is built for the
// baseline like the rest of the library.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_kernels.h"
#include "simd_avx2.h"

namespace cpu::avx2 {
using V = VAvx2;
// Prefill gemm: 6 rows of w by 2 vectors (16 rows) of x: 12 accumulators + 2 x + 1 broadcast.
// K block 256: a 16 x 256 x tile is 16 KiB of L1.
constexpr int kPNR = 6, kPMV = 2;
constexpr int64_t kPKC = 256;
#include "body_common.inc"
#include "body_gemm.inc"
#include "body_gemm_walk.inc"
#include "body_gemm_q.inc"
#include "body_gemm_q_walk.inc"
#include "body_gemm_packed.inc"
#include "body_norm.inc"
#include "body_act.inc"
#include "body_elementwise.inc"
#include "body_rope.inc"
#include "body_attention.inc"
}  // namespace cpu::avx2

namespace cpu {
const KernelTable kTableAvx2 = {"avx2",      avx2::gemm,     avx2::pack_x,     avx2::gemm_packed, avx2::kMT,
                                avx2::kPKC,  avx2::rms_norm, avx2::layer_norm, avx2::act,         avx2::add,
                                avx2::embed, avx2::rope,     avx2::attention,  nullptr,           nullptr, avx2::gemm_q, avx2::gemm_walk, avx2::gemm_q_walk};
}  // namespace cpu
