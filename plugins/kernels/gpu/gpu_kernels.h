// gpu_kernels.h: libgpu's rows (launch, init, scratch hooks), one translation unit per family.
#pragma once
#include <radiance/rad_plugin.h>

#include <cstdint>

namespace gpu {

// The card's multiprocessors and the shared memory each one has (device.cpp).
int sm_count();
uint64_t smem_per_sm();

// Elementwise and row ops (k_elementwise.cu).
int embed(const RadArgs* a);
int add(const RadArgs* a);
int swiglu(const RadArgs* a);
int geglu(const RadArgs* a);
int gelu(const RadArgs* a);
int softcap(const RadArgs* a);
int gather_rows(const RadArgs* a);
// Norms (k_norm.cu).
int rms_norm(const RadArgs* a);
int layer_norm(const RadArgs* a);
// Rotary embedding (k_rope.cu; frequencies computed on the host as libref does).
int rope(const RadArgs* a);
// Paged attention (k_attention.cu).
int attention(const RadArgs* a);
uint64_t attention_scratch(const RadArgs* geom);
// rope on q and k, then attention (k_attention.cu): a decode step's kernel turns q and k as it
// loads them (k_rope.h's arithmetic: the chain's bytes) and writes them back turned; other steps
// run the chain (rope, rope, attention). Its scratch is attention's.
int rope_attention(const RadArgs* a);
struct RopeTable;  // k_rope.h
// The decode-row kernels' geometry (k_attention.cu fills it).
struct AttnGeom {
    int n_head, n_head_kv, head_dim, block, n_seq, bt_stride, window, splits, group_chunks, group;
    int own_row;      // 1: each row is its sequence's only one this step, and the kernel stores its k/v itself
    int single_only;  // 1: rows of sequences with several rows this step are the flash kernel's
    // > 0: a row's context is cut into only as many of the splits as it needs for at most this many
    // keys each (live_splits, k_paged.h), the rest idle; with one live split the attention kernel
    // writes y itself and k_merge leaves the row alone. 0: every split takes a share.
    int live_keys;
    float scale, softcap;
    int64_t q_pitch, k_pitch, v_pitch, y_pitch;
#ifdef RAD_GPU_PHASES
    unsigned long long* ph;  // k_phase.h's slots of this launch (a measuring build only)
#endif
};
// Decode rows on the tensor cores (k_attention_decode.cu): the GQA group's query heads as the
// rows of an m16n8k16 tile; writes y (one split) or the partials k_merge reads. RAD_E_UNSUPPORTED
// where it has no path (HIP, an f32 cache, head_dim other than 64 / 128, groups above 16).
// With `rope` (every row its sequence's only one, rot_dim = head_dim) q and the own k are turned
// as they load and, with one split, written back turned (k_merge writes them back otherwise).
// It may lower g.splits and set g.live_keys (the caller's merge follows them).
int attention_decode_tc(const RadArgs* a, AttnGeom& g, int64_t n, float* part, const RopeTable* rope = nullptr);
struct FlashGeom {
    int n_head, n_head_kv, block, n_seq, bt_stride, window;
    float scale, softcap;
    int64_t q_pitch, y_pitch;
    int multi_only;   // 1: sequences with one row this step are left to the decode kernel
    int block_shift;  // log2(block) when block is a power of two, else -1 (attention_flash sets it)
};
// The tensor-core prefill path (k_attention_flash.cu); RAD_E_UNSUPPORTED where it has none.
int attention_flash(const RadArgs* a, const FlashGeom& g, int64_t n, int head_dim);
// Matrix products (k_gemm.cu): a weight-streaming kernel for few rows, cuBLASLt for the rest.
int gemm_rows(const RadArgs* a);
int gemm_blas(const RadArgs* a);
// y += the product without a bias through cuBLASLt's beta (gemm_add's many rows); RAD_E_UNSUPPORTED
// where that does not run, before y is touched.
int gemm_blas_add(const RadArgs* a);
uint64_t gemm_blas_scratch(const RadArgs* geom);
// gemm_swiglu: a fused weight-streaming kernel for few rows, cuBLASLt + swiglu for the rest.
int gemm_swiglu(const RadArgs* a);
uint64_t gemm_swiglu_scratch(const RadArgs* geom);
// The decode-path fusions (one or two rows in one weight-streaming launch, the chain otherwise):
// gemm_add (y += the product), rms_norm_gemm and rms_norm_gemm_swiglu (the norm in the prologue).
int gemm_add(const RadArgs* a);
uint64_t gemm_add_scratch(const RadArgs* geom);
int rms_norm_gemm(const RadArgs* a);
uint64_t rms_norm_gemm_scratch(const RadArgs* geom);
int rms_norm_gemm_swiglu(const RadArgs* a);
uint64_t rms_norm_gemm_swiglu_scratch(const RadArgs* geom);
// add_rms_norm (k_norm.cu): one block per row, the sum kept in registers.
int add_rms_norm(const RadArgs* a);

// Tensor parallelism (k_collectives.cu): peer memory, NCCL (where built), host staging.
int all_reduce_staged(const RadArgs* a);
int all_gather_staged(const RadArgs* a);
int all_reduce_p2p(const RadArgs* a);
int all_gather_p2p(const RadArgs* a);
#if RAD_GPU_NCCL
int all_reduce_nccl(const RadArgs* a);
uint64_t all_reduce_nccl_scratch(const RadArgs* geom);
int all_gather_nccl(const RadArgs* a);
uint64_t all_gather_nccl_scratch(const RadArgs* geom);
#endif
// While the host waits for a queue: a group whose generation was torn down is aborted.
bool collectives_live();
bool collectives_abort_if_torn_down();
const char* collectives_error();
// Greedy picking (k_argmax.cu) and drawing (k_sample.cu) on the card.
int argmax(const RadArgs* a);
uint64_t argmax_scratch(const RadArgs* geom);
int sample(const RadArgs* a);
// The pre-filter's candidates, maxima and counts (k_sample_prefilter.cu).
uint64_t sample_scratch(const RadArgs* geom);
// Mixtures of experts (k_moe.cu): routing, and the routed experts' MLPs.
int moe_route(const RadArgs* a);
int moe_mlp(const RadArgs* a);
uint64_t moe_mlp_scratch(const RadArgs* geom);
int gated_add(const RadArgs* a);
// gemm over quantised weights (k_gemm_q.cu): code-streaming gemvs for few rows, bf16 slabs and
// cuBLASLt for many.
int gemm_q(const RadArgs* a);
uint64_t gemm_q_scratch(const RadArgs* geom);

// Launch status: the last launch's error, as a RadStatus.
int launched();

}  // namespace gpu
