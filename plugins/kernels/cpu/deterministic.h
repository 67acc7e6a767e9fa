// deterministic.h: libcpu's batch-invariant mode (`--deterministic`, docs/OPS.md general rules),
// set by the engine through rad_kernel_set_deterministic (exports.cpp) before it plans. In it
// every value a row gets depends on that row alone, never on the launch's row count, on how a
// prompt was chunked or on the pool's thread count. gemm sums every row in the row walk's order
// (body_gemm.inc, two accumulators a row: GemmArgs.two_acc, where it keeps four for up to 4 rows
// by default): the walk itself up to 8 rows, its blocked form (body_gemm_walk.inc, tiles of rows
// by weight rows, the same two partials an output) past them; never the packed kernel, AMX or
// level 3's bf16 dots. gemm_q takes its walk (body_gemm_q.inc, two accumulators a group at any
// count already) up to 8 rows, its blocked form past them (body_gemm_q_walk.inc). A row's order is then its
// own: its accumulators, their sum, the horizontal sum, the scalar tail, the bias; which block,
// tile or task holds it changes no bit.
// The packed kernel's order (one FMA chain a K block) is M-independent too and costs prefill
// nothing, but at one decode row it wastes all lanes but one: on the 2-core VM it took decode at
// batch 1 from ~24 to ~4.5 tok/s. The plain walk at every M cost prefill 512 a third; the blocked
// walk about a sixth (docs/PERFORMANCE.md, 2026-12-07). moe_mlp's decode row hands over to its
// chain. The other ops already sum a row the same way at any M (attention: one task per row and
// kv head over its own cached keys in order). Process-wide: the mode of the last engine that set
// it.
#pragma once

namespace cpu {

bool deterministic();
void set_deterministic(bool on);

}  // namespace cpu
