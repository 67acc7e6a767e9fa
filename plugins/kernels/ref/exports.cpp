// libref: the host reference kernel library. It implements every op of docs/OPS.md in the
// plainest order (f32 accumulation, round-to-nearest-even, built with -ffp-contract=off), declares
// itself a reference library, and is what every other library is checked against.
#include <radiance/kernels/rad_compose.h>
#include <radiance/kernels/rad_host_moe.h>
#include <radiance/rad_ops.h>

#include <string_view>

#include "ref_util.h"

namespace {

int ref_add_rms_norm(const RadArgs* a) { return rad_compose_add_rms_norm(a, ref_add, ref_rms_norm); }
int ref_gemm_swiglu(const RadArgs* a) { return rad_compose_gemm_swiglu(a, ref_gemm, ref_swiglu); }
int ref_gemm_add(const RadArgs* a) { return rad_compose_gemm_add(a, ref_gemm, ref_add); }
int ref_rms_norm_gemm(const RadArgs* a) { return rad_compose_rms_norm_gemm(a, ref_rms_norm, ref_gemm); }
int ref_rms_norm_gemm_swiglu(const RadArgs* a) { return rad_compose_rms_norm_gemm_swiglu(a, ref_rms_norm, ref_gemm_swiglu); }
int ref_rope_attention(const RadArgs* a) { return rad_compose_rope_attention(a, ref_rope, ref_attention); }

const RadConstraint c_float_weights[] = {RAD_CIN("wdtype", "f32 bf16 f16")};
const RadConstraint c_block16[] = {RAD_CEQ("block", 16)};
// gemm_q: every code dtype the core's decoder reads, the float scales
const RadConstraint c_quant[] = {RAD_CIN("qtype", "i8 u8 i4 u4 fp8_e4m3 fp8_e5m2"), RAD_CIN("sdtype", "f32 f16 bf16")};

#define ROW(name, op, fn, cons, ncons) \
    { name, op, op, "reference " op, "any", "f32 activations", RAD_DOMAIN_HOST, 0, cons, ncons, 0, fn }
// A fused op as its chain of reference rows (rad_compose.h).
#define CHAIN(name, op, fn, scratch, chain)                                                                                          \
    {                                                                                                                                \
        name, op, op, "reference " chain, "any", "f32 activations", RAD_DOMAIN_HOST, 0, c_float_weights, 1, 0, fn, nullptr, nullptr, \
            scratch, nullptr, nullptr, chain                                                                                         \
    }

const RadKernelInfo rows[] = {
    ROW("ref_embed", "embed", ref_embed, c_float_weights, 1),
    ROW("ref_rms_norm", "rms_norm", ref_rms_norm, c_float_weights, 1),
    ROW("ref_layer_norm", "layer_norm", ref_layer_norm, c_float_weights, 1),
    ROW("ref_gemm", "gemm", ref_gemm, c_float_weights, 1),
    ROW("ref_gemm_q", "gemm_q", ref_gemm_q, c_quant, 2),
    ROW("ref_rope", "rope", ref_rope, nullptr, 0),
    ROW("ref_attention", "attention", ref_attention, c_block16, 1),
    ROW("ref_swiglu", "swiglu", ref_swiglu, nullptr, 0),
    ROW("ref_geglu", "geglu", ref_geglu, nullptr, 0),
    ROW("ref_gelu", "gelu", ref_gelu, nullptr, 0),
    ROW("ref_softcap", "softcap", ref_softcap, nullptr, 0),
    ROW("ref_add", "add", ref_add, nullptr, 0),
    ROW("ref_gather_rows", "gather_rows", ref_gather_rows, nullptr, 0),
    ROW("ref_all_reduce_host", "all_reduce", ref_all_reduce, nullptr, 0),
    ROW("ref_all_gather_host", "all_gather", ref_all_gather, nullptr, 0),
    ROW("ref_argmax", "argmax", ref_argmax, nullptr, 0),
    ROW("ref_sample", "sample", ref_sample, nullptr, 0),
    ROW("ref_moe_route", "moe_route", rad_host_moe_route, nullptr, 0),
    ROW("ref_moe_mlp", "moe_mlp", ref_moe_mlp, c_float_weights, 1),
    ROW("ref_gated_add", "gated_add", rad_host_gated_add, nullptr, 0),
    {"ref_add_rms_norm", "add_rms_norm", "add_rms_norm", "reference add then rms_norm", "any", "f32 activations", RAD_DOMAIN_HOST, 0,
     c_float_weights, 1, 0, ref_add_rms_norm, nullptr, nullptr, nullptr, nullptr, nullptr, "add,rms_norm"},
    {"ref_gemm_swiglu", "gemm_swiglu", "gemm_swiglu", "reference gemm then swiglu", "any", "f32 activations", RAD_DOMAIN_HOST, 0,
     c_float_weights, 1, 0, ref_gemm_swiglu, nullptr, nullptr, rad_compose_gemm_swiglu_scratch, nullptr, nullptr, "gemm,swiglu"},
    CHAIN("ref_gemm_add", "gemm_add", ref_gemm_add, rad_compose_gemm_add_scratch, "gemm,add"),
    CHAIN("ref_rms_norm_gemm", "rms_norm_gemm", ref_rms_norm_gemm, rad_compose_rms_norm_gemm_scratch, "rms_norm,gemm"),
    CHAIN("ref_rms_norm_gemm_swiglu", "rms_norm_gemm_swiglu", ref_rms_norm_gemm_swiglu, rad_compose_rms_norm_gemm_swiglu_scratch,
          "rms_norm,gemm_swiglu"),
    {"ref_rope_attention", "rope_attention", "rope_attention", "reference rope on q and k, then attention", "any", "f32 activations",
     RAD_DOMAIN_HOST, 0, c_block16, 1, 0, ref_rope_attention, nullptr, nullptr, nullptr, nullptr, nullptr, "rope,attention"},
};

}  // namespace

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT

extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_KERNEL, "libref", "0.1", "host reference kernels (f32, no FMA)", "host"};
    return &info;
}
RAD_EXPORT int rad_plugin_reference(void) { return 1; }
RAD_CONVENTIONAL_KERNEL_EXPORTS(rows)
RAD_EXPORT int rad_kernel_collective(int i) {
    return i >= 0 && i < RAD_N_OF(rows) && (rows[i].op == std::string_view("all_reduce") || rows[i].op == std::string_view("all_gather"));
}
RAD_EXPORT int rad_kernel_concurrent(int i) { return !rad_kernel_collective(i); }
}
