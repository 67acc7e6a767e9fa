// libcpu: the optimised host kernel library. Implements every op of docs/OPS.md with the same
// schemas as libref (rad_ops_conventional), vectorised per instruction set (AVX-512, AVX2+FMA, a
// portable fallback; chosen once by CPUID at rad_plugin_open) and spread over a persistent thread
// pool. Not a reference library: it sums with FMA and in blocks, and is checked against libref
// by rad-avx-check.
#include <radiance/kernels/rad_compose.h>
#include <radiance/kernels/rad_compose_moe.h>
#include <radiance/kernels/rad_host_collectives.h>
#include <radiance/rad_ops.h>

#include "cpu_kernels.h"
#include "deterministic.h"
#include "pool.h"

namespace {

// The fused ops by composition: add and norm are a few percent of a layer on the host, and the
// product dominates gemm_swiglu, so the chain of libcpu's own rows serves them.
int cpu_add_rms_norm(const RadArgs* a) { return rad_compose_add_rms_norm(a, cpu_add, cpu_rms_norm); }
int cpu_gemm_swiglu_decode(const RadArgs* a) { return rad_compose_gemm_swiglu(a, cpu_gemm_decode, cpu_swiglu); }
int cpu_gemm_swiglu(const RadArgs* a) { return rad_compose_gemm_swiglu(a, cpu_gemm, cpu_swiglu); }
// The decode-path fusions (gemm_add, rms_norm_gemm, rms_norm_gemm_swiglu) the same way: a card
// saves a launch and a round trip with each, the host nothing, so their chains serve them here.
int cpu_gemm_add_decode(const RadArgs* a) { return rad_compose_gemm_add(a, cpu_gemm_decode, cpu_add); }
int cpu_gemm_add(const RadArgs* a) { return rad_compose_gemm_add(a, cpu_gemm, cpu_add); }
int cpu_rms_norm_gemm_decode(const RadArgs* a) { return rad_compose_rms_norm_gemm(a, cpu_rms_norm, cpu_gemm_decode); }
int cpu_rms_norm_gemm(const RadArgs* a) { return rad_compose_rms_norm_gemm(a, cpu_rms_norm, cpu_gemm); }
int cpu_rms_norm_gemm_swiglu_decode(const RadArgs* a) { return rad_compose_rms_norm_gemm_swiglu(a, cpu_rms_norm, cpu_gemm_swiglu_decode); }
int cpu_rms_norm_gemm_swiglu(const RadArgs* a) { return rad_compose_rms_norm_gemm_swiglu(a, cpu_rms_norm, cpu_gemm_swiglu); }
// rope_attention: the rotation is a sliver of a host layer, so its chain serves it too.
int cpu_rope_attention(const RadArgs* a) { return rad_compose_rope_attention(a, cpu_rope, cpu_attention); }

const RadConstraint c_float_weights[] = {RAD_CIN("wdtype", "f32 bf16 f16")};
const RadConstraint c_decode[] = {RAD_CIN("wdtype", "f32 bf16 f16"), RAD_CLE("M", 8)};
const RadConstraint c_moe_decode[] = {RAD_CIN("wdtype", "f32 bf16 f16"), RAD_CLE("n", 8)};
const RadConstraint c_block16[] = {RAD_CEQ("block", 16)};  // libref's block: one KV layout for both
// gemm_q: the code dtypes the kernels widen (body_gemm_q.inc); groups of whole passes (two vectors of 16 lanes)
const RadConstraint c_quant[] = {RAD_CIN("qtype", "i8 u8 i4 u4 fp8_e4m3"), RAD_CIN("sdtype", "f32 f16 bf16"), RAD_CDIV("group", 32)};
const RadConstraint c_quant_decode[] = {RAD_CIN("qtype", "i8 u8 i4 u4 fp8_e4m3"), RAD_CIN("sdtype", "f32 f16 bf16"), RAD_CDIV("group", 32),
                                        RAD_CLE("M", 8)};
// 8-bit codes in groups of 16 (a GGUF Q6_K's scales): a vector of 16 lanes (or two of 8) a group;
// 4-bit codes need the whole pass of 32 that load_nibbles unpacks.
const RadConstraint c_quant16[] = {RAD_CIN("qtype", "i8 u8 fp8_e4m3"), RAD_CIN("sdtype", "f32 f16 bf16"), RAD_CDIV("group", 16)};
const RadConstraint c_quant16_decode[] = {RAD_CIN("qtype", "i8 u8 fp8_e4m3"), RAD_CIN("sdtype", "f32 f16 bf16"), RAD_CDIV("group", 16),
                                          RAD_CLE("M", 8)};

#define ROW(name, op, fn, what, shape, prio, cons, ncons) \
    { name, op, op, what, shape, "f32 activations; f32/bf16/f16 weights", RAD_DOMAIN_HOST, prio, cons, ncons, 0, fn }
// A fused op served by its chain of libcpu rows (rad_compose.h), which rad-kbench checks it against.
#define CHAIN(name, op, fn, what, shape, prio, cons, ncons, scratch, chain)                                                              \
    {                                                                                                                                    \
        name, op, op, what, shape, "f32 activations; f32/bf16/f16 weights", RAD_DOMAIN_HOST, prio, cons, ncons, 0, fn, nullptr, nullptr, \
            scratch, nullptr, nullptr, chain                                                                                             \
    }

const RadKernelInfo rows[] = {
    ROW("cpu_embed", "embed", cpu_embed, "vectorised row gather and widen", "any", 0, c_float_weights, 1),
    ROW("cpu_rms_norm", "rms_norm", cpu_rms_norm, "vectorised rms norm", "any", 0, c_float_weights, 1),
    ROW("cpu_layer_norm", "layer_norm", cpu_layer_norm, "vectorised layer norm", "any", 0, c_float_weights, 1),
    ROW("cpu_gemm_decode", "gemm", cpu_gemm_decode, "weight-streaming gemm, split over N", "M <= 8", 1, c_decode, 2),
    ROW("cpu_gemm", "gemm", cpu_gemm, "cache-blocked gemm, split over M blocks and N", "any M", 0, c_float_weights, 1),
    {"cpu_gemm_q_decode", "gemm_q", "gemm_q", "code-streaming gemm, each vector dequantised as libref's decoder does, split over N",
     "M <= 8, group % 32 == 0", "f32 activations; i8/u8/i4/u4/fp8_e4m3 codes", RAD_DOMAIN_HOST, 1, c_quant_decode, 4, 0, cpu_gemm_q_decode},
    {"cpu_gemm_q", "gemm_q", "gemm_q", "the packed gemm over K blocks dequantised as they are read", "any M, group % 32 == 0",
     "f32 activations; i8/u8/i4/u4/fp8_e4m3 codes", RAD_DOMAIN_HOST, 0, c_quant, 3, 0, cpu_gemm_q},
    {"cpu_gemm_q16_decode", "gemm_q", "gemm_q", "cpu_gemm_q_decode for 8-bit codes in groups of 16", "M <= 8, group % 16 == 0",
     "f32 activations; i8/u8/fp8_e4m3 codes", RAD_DOMAIN_HOST, 1, c_quant16_decode, 4, 0, cpu_gemm_q_decode},
    {"cpu_gemm_q16", "gemm_q", "gemm_q", "cpu_gemm_q for 8-bit codes in groups of 16", "any M, group % 16 == 0",
     "f32 activations; i8/u8/fp8_e4m3 codes", RAD_DOMAIN_HOST, 0, c_quant16, 3, 0, cpu_gemm_q},
    ROW("cpu_rope", "rope", cpu_rope, "libref's frequencies, vectorised rotation", "any", 0, nullptr, 0),
    ROW("cpu_attention", "attention", cpu_attention, "paged varlen GQA attention, task per (row, kv head)", "any", 0, c_block16, 1),
    ROW("cpu_swiglu", "swiglu", cpu_swiglu, "vectorised silu(gate) * up", "any", 0, nullptr, 0),
    ROW("cpu_geglu", "geglu", cpu_geglu, "vectorised gelu_tanh(gate) * up", "any", 0, nullptr, 0),
    ROW("cpu_gelu", "gelu", cpu_gelu, "vectorised gelu (erf or tanh)", "any", 0, nullptr, 0),
    ROW("cpu_softcap", "softcap", cpu_softcap, "libref's scalar loop (logits rows only)", "any", 0, nullptr, 0),
    ROW("cpu_add", "add", cpu_add, "vectorised add", "any", 0, nullptr, 0),
    ROW("cpu_gather_rows", "gather_rows", cpu_gather_rows, "row copy", "any", 0, nullptr, 0),
    // Tensor parallelism on one host: the shared host-staging sum, so libcpu and libref ranks agree bytewise.
    ROW("cpu_all_reduce_host", "all_reduce", rad_host_all_reduce_f32, "host-staging sum in rank order", "any", 0, nullptr, 0),
    ROW("cpu_all_gather_host", "all_gather", rad_host_all_gather_f32, "host-staging concatenation by rank", "any", 0, nullptr, 0),
    {"cpu_add_rms_norm", "add_rms_norm", "add_rms_norm", "cpu_add then cpu_rms_norm", "any", "f32 activations; f32/bf16/f16 weights",
     RAD_DOMAIN_HOST, 0, c_float_weights, 1, 0, cpu_add_rms_norm, nullptr, nullptr, nullptr, nullptr, nullptr, "add,rms_norm"},
    {"cpu_gemm_swiglu_decode", "gemm_swiglu", "gemm_swiglu", "cpu_gemm_decode then cpu_swiglu", "M <= 8",
     "f32 activations; f32/bf16/f16 weights", RAD_DOMAIN_HOST, 1, c_decode, 2, 0, cpu_gemm_swiglu_decode, nullptr, nullptr,
     rad_compose_gemm_swiglu_scratch, nullptr, nullptr, "gemm,swiglu"},
    {"cpu_gemm_swiglu", "gemm_swiglu", "gemm_swiglu", "cpu_gemm then cpu_swiglu", "any M", "f32 activations; f32/bf16/f16 weights",
     RAD_DOMAIN_HOST, 0, c_float_weights, 1, 0, cpu_gemm_swiglu, nullptr, nullptr, rad_compose_gemm_swiglu_scratch, nullptr, nullptr,
     "gemm,swiglu"},
    CHAIN("cpu_gemm_add_decode", "gemm_add", cpu_gemm_add_decode, "cpu_gemm_decode then cpu_add", "M <= 8", 1, c_decode, 2,
          rad_compose_gemm_add_scratch, "gemm,add"),
    CHAIN("cpu_gemm_add", "gemm_add", cpu_gemm_add, "cpu_gemm then cpu_add", "any M", 0, c_float_weights, 1, rad_compose_gemm_add_scratch,
          "gemm,add"),
    CHAIN("cpu_rms_norm_gemm_decode", "rms_norm_gemm", cpu_rms_norm_gemm_decode, "cpu_rms_norm then cpu_gemm_decode", "M <= 8", 1, c_decode,
          2, rad_compose_rms_norm_gemm_scratch, "rms_norm,gemm"),
    CHAIN("cpu_rms_norm_gemm", "rms_norm_gemm", cpu_rms_norm_gemm, "cpu_rms_norm then cpu_gemm", "any M", 0, c_float_weights, 1,
          rad_compose_rms_norm_gemm_scratch, "rms_norm,gemm"),
    CHAIN("cpu_rms_norm_gemm_swiglu_decode", "rms_norm_gemm_swiglu", cpu_rms_norm_gemm_swiglu_decode,
          "cpu_rms_norm then cpu_gemm_swiglu_decode", "M <= 8", 1, c_decode, 2, rad_compose_rms_norm_gemm_swiglu_scratch,
          "rms_norm,gemm_swiglu"),
    CHAIN("cpu_rms_norm_gemm_swiglu", "rms_norm_gemm_swiglu", cpu_rms_norm_gemm_swiglu, "cpu_rms_norm then cpu_gemm_swiglu", "any M", 0,
          c_float_weights, 1, rad_compose_rms_norm_gemm_swiglu_scratch, "rms_norm,gemm_swiglu"),
    CHAIN("cpu_rope_attention", "rope_attention", cpu_rope_attention, "cpu_rope on q and k then cpu_attention", "any", 0, c_block16, 1,
          nullptr, "rope,attention"),
    ROW("cpu_moe_route", "moe_route", cpu_moe_route, "softmax top-k in libref's order", "any", 0, nullptr, 0),
    // no chain named: the experts' sums are libcpu's gemm's (FMA, blocked), checked against libref's
    // (mutation: a routing weight off by 0.1% in its sum fails kbench's small n=1 and n=2 cases at 1e-3)
    {"cpu_moe_mlp_decode", "moe_mlp", "moe_mlp", "(row, pick) gemvs in two pool regions", "n <= 8", "f32 activations; f32/bf16/f16 weights",
     RAD_DOMAIN_HOST, 1, c_moe_decode, 2, 0, cpu_moe_mlp_decode, nullptr, nullptr, cpu_moe_mlp_decode_scratch, nullptr, nullptr, nullptr},
    CHAIN("cpu_moe_mlp", "moe_mlp", cpu_moe_mlp, "rows grouped by expert through cpu_gemm, cpu_swiglu, cpu_gemm", "any", 0, c_float_weights,
          1, rad_compose_moe_mlp_scratch, nullptr),
    ROW("cpu_gated_add", "gated_add", cpu_gated_add, "sigmoid-gated row add in libref's order", "any", 0, nullptr, 0),
};
constexpr int kRows = static_cast<int>(sizeof rows / sizeof rows[0]);

}  // namespace

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT

extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_KERNEL, "libcpu", "0.1",
                                       "optimised host kernels (AVX-512 / AVX2+FMA / portable, thread pool)", "host"};
    return &info;
}
RAD_EXPORT int rad_plugin_open(const RadMachine*) {
    cpu::isa_init();
    cpu::pool_init();
    return RAD_OK;
}
RAD_EXPORT void rad_plugin_close(void) { cpu::pool_shutdown(); }
RAD_CONVENTIONAL_KERNEL_EXPORTS(rows)
// Rows may be launched from several threads at once: a launch that finds the pool busy runs on
// its own thread.
RAD_EXPORT int rad_kernel_collective(int i) {
    return i >= 0 && i < kRows && (rows[i].launch == rad_host_all_reduce_f32 || rows[i].launch == rad_host_all_gather_f32);
}
RAD_EXPORT int rad_kernel_concurrent(int i) { return i >= 0 && i < kRows && !rad_kernel_collective(i); }
// --deterministic (plugin_core.h, RadKernelSetDeterministicFn): libcpu honours it (deterministic.h).
RAD_EXPORT int rad_kernel_set_deterministic(int on) {
    cpu::set_deterministic(on != 0);
    return RAD_OK;
}
}
