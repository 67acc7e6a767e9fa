// isa_scalar.cpp: level 0, every kernel body over a one-lane vector (portable C++).
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_kernels.h"
#include "simd_scalar.h"

namespace cpu::scalar {
using V = VScalar;
constexpr int kPNR = 4, kPMV = 3;  // prefill gemm tile: 4 rows of w by 3 rows of x
constexpr int64_t kPKC = 256;      // prefill K block
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
}  // namespace cpu::scalar

namespace cpu {
const KernelTable kTableScalar = {
    "scalar",    scalar::gemm, scalar::pack_x, scalar::gemm_packed, scalar::kMT,       scalar::kPKC, scalar::rms_norm, scalar::layer_norm,
    scalar::act, scalar::add,  scalar::embed,  scalar::rope,        scalar::attention, nullptr,      nullptr, scalar::gemm_q, scalar::gemm_walk, scalar::gemm_q_walk};
}  // namespace cpu
