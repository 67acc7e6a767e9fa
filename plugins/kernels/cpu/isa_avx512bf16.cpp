// isa_avx512bf16.cpp: level 3, level 2's kernels plus the gemm for bf16 weights on AVX512_BF16
// dot products (body_gemm_bf16dot.inc).
#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu_kernels.h"
#include "simd_avx512.h"
#undef CPU_TARGET
#define CPU_TARGET __attribute__((target(CPU_AVX512_ISA ",avx512bf16")))

namespace cpu::avx512bf16 {
using V = VAvx512;
// 4 x 4 tile: 16 accumulators + 4 weight vectors + hi and lo x vectors.
constexpr int kBMR = 4, kBNR = 4;
constexpr int64_t kKC = 512;  // a multiple of 32, the bf16 pairs of one dot product vector
#include "body_common.inc"
#include "body_gemm_bf16dot.inc"
}  // namespace cpu::avx512bf16

namespace cpu {
// Level 2's table with the bf16-dot gemm added (kTableAvx512 is constant-initialised, so it is
// ready before this dynamic initialisation reads it).
const KernelTable kTableAvx512Bf16 = {"avx512bf16",           kTableAvx512.gemm,        kTableAvx512.pack_x,   kTableAvx512.gemm_packed,
                                      kTableAvx512.packed_mt, kTableAvx512.packed_kc,   kTableAvx512.rms_norm, kTableAvx512.layer_norm,
                                      kTableAvx512.act,       kTableAvx512.add,         kTableAvx512.embed,    kTableAvx512.rope,
                                      kTableAvx512.attention, avx512bf16::gemm_bf16dot, avx512bf16::pack_bf16, kTableAvx512.gemm_q,
                                      kTableAvx512.gemm_walk, kTableAvx512.gemm_q_walk};
}  // namespace cpu
