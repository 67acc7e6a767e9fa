// deterministic.h: libcpu's batch-invariant mode (`--deterministic`, docs/OPS.md general rules),
// set by the engine through rad_kernel_set_deterministic (exports.cpp) before it plans. In it
// every value a row gets depends on that row alone, never on the launch's row count, on how a
// prompt was chunked or on the pool's thread count: gemm and gemm_q take the packed kernel at
// every M (its order for one output is fixed: an FMA chain over each K block of kPKC in index
// order, the blocks added in order, the bias last; which lane or tile holds the row, and how the
// work is cut into tasks, change nothing), never the row walk (its accumulators a row depend on
// how many rows ride along), AMX or the level-3 bf16 dots. The other ops already sum a row the
// same way at any M (attention: one task per row and kv head over its own cached keys in order).
// Process-wide: the mode of the last engine that set it.
#pragma once

namespace cpu {

bool deterministic();
void set_deterministic(bool on);

}  // namespace cpu
