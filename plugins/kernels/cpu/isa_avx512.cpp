// isa_avx512.cpp: level 2, every kernel body over 16-lane AVX-512 vectors (F/BW/VL). Only the
// functions (by their target attribute) use these instructions.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_kernels.h"
#include "simd_avx512.h"

namespace cpu::avx512 {
using V = VAvx512;
// Prefill gemm: 12 rows of w by 2 vectors (32 rows) of x: 24 accumulators + 2 x + 1 broadcast.
// K block 256: a 32 x 256 x tile is 32 KiB of L1.
constexpr int kPNR = 12, kPMV = 2;
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
}  // namespace cpu::avx512

namespace cpu {
const KernelTable kTableAvx512 = {
    "avx512",    avx512::gemm, avx512::pack_x, avx512::gemm_packed, avx512::kMT,       avx512::kPKC, avx512::rms_norm, avx512::layer_norm,
    avx512::act, avx512::add,  avx512::embed,  avx512::rope,        avx512::attention, nullptr,      nullptr, avx512::gemm_q, avx512::gemm_walk, avx512::gemm_q_walk};
}  // namespace cpu
