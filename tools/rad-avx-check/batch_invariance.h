// batch_invariance.h: rad-avx-check's check of libcpu's --deterministic mode (deterministic.h,
// docs/OPS.md general rules): with rad_kernel_set_deterministic(1), each row of a gemm or gemm_q
// must come out with the same bits whether it runs alone (M = 1) or among the case's M rows.
#pragma once
#include <string>

#include "check_case.h"

namespace avxcheck {

// A gemm or gemm_q case of more than one row that is expected to succeed.
bool batch_invariance_applies(const Case& c);

// Runs the case whole and three of its rows alone (the first, a middle and the last) through
// `row` of `lib` (its deterministic mode already on); "" when every row alone has the bits it
// had in the batch, else what differed.
std::string check_batch_invariance(const Case& c, const KernelLib& lib, const RadKernelInfo* row, const Params& derived);

}  // namespace avxcheck
