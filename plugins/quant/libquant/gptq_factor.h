// gptq_factor.h: the upper Cholesky factor U of H^-1 (H^-1 = U^T U) whose rows gptq's sweep
// spreads each column's rounding error with (gptq.cpp).
#pragma once
#include <cstdint>
#include <vector>

namespace quant {

// U (K x K, row-major, zero below the diagonal) of the symmetric positive definite h (row-major,
// taken by value and consumed); false where h is not positive definite. The same bits on every
// machine and thread count: each entry is made by the same operations in the same order (lanes of
// four, no fused multiply-adds), whichever thread and instruction set runs it.
bool inverse_upper_factor(std::vector<double> h, int64_t K, std::vector<double>* u);

}  // namespace quant
