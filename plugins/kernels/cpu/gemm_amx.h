// gemm_amx.h: the prefill gemm on Intel AMX tiles (gemm_amx.cpp).
#pragma once
#include <cstdint>

#include "cpu_kernels.h"

namespace cpu {

// Whether this CPU has AMX-BF16 and the kernel granted this process the tile state (asked once).
bool amx_available();

// y[:, 0:n) for the leading n columns it serves (a multiple of 32), on up to `threads` threads;
// 0 (nothing written) where it does not apply: weights other than bf16, K not a multiple of 32,
// N below 32, or no AMX. The caller computes the remaining columns.
int64_t gemm_amx(const GemmArgs& g, int threads);

}  // namespace cpu
