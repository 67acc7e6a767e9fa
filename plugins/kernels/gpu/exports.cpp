// libgpu: the device kernel library (CUDA on NVIDIA Hopper, the same source compile-checked for
// AMD through HIP). Every op of docs/OPS.md with the conventional schemas, f32 activations, bf16 /
// f16 / f32 weights, a bf16, f32 or fp8 KV cache in libref's block of 16. Rows run on the card the
// library binds at rad_plugin_open (RAD_DOMAIN_DEVICE); the engine places the plan there through
// rad_kernel_device.
#include <radiance/rad_ops.h>

#include <string_view>

#include "gpu_kernels.h"

namespace gpu {
int open_device(const RadMachine* m);
const RadDeviceApi* device_api();
}  // namespace gpu

namespace {

const RadConstraint c_float_weights[] = {RAD_CIN("wdtype", "f32 bf16 f16")};
const RadConstraint c_few_rows[] = {RAD_CIN("wdtype", "f32 bf16 f16"), RAD_CLE("M", 8)};
// The caches attention and rope_attention read: bf16, f32 and fp8 e4m3 with its scales
// (rad_kv_fp8.h; the walk kernel reads it, no tensor-core path). rope_attention's fused decode
// kernel is bf16's only; with another cache it runs its chain. Any other cache the plan refuses at
// startup naming the op rather than a launch failing. The architectures always pass kv_dtype.
const RadConstraint c_attn[] = {RAD_CEQ("block", 16), RAD_CLE("head_dim", 256), RAD_CIN("kv_dtype", "f32 bf16 fp8_e4m3")};
const RadConstraint c_rot[] = {RAD_CLE("rot_dim", 256)};
const RadConstraint c_route[] = {RAD_CLE("k", 32)};  // a lane per pick's weight
const RadConstraint c_moe[] = {RAD_CIN("wdtype", "f32 bf16 f16"), RAD_CLE("k", 16)};
const RadConstraint c_peers[] = {RAD_CEQ(RAD_FACT_P2P, 1), RAD_CLE(RAD_FACT_WORLD, 8)};
const RadConstraint c_quant[] = {RAD_CIN("qtype", "i8 u8 i4 u4 fp8_e4m3"), RAD_CIN("sdtype", "f32 f16 bf16")};
const RadConstraint c_distinct[] = {RAD_CEQ(RAD_FACT_DISTINCT, 1)};  // NCCL refuses two ranks on one card

#define ROW(name, op, fn, what, shape, prio, cons, ncons, init, scratch)                                                                \
    {                                                                                                                                   \
        name, op, op, what, shape, "f32 activations; f32/bf16/f16 weights", RAD_DOMAIN_DEVICE, prio, cons, ncons, 0, fn, init, nullptr, \
            scratch                                                                                                                     \
    }

// A fused op's row, with the chain of conventional ops it is byte-identical to (rad-kbench checks it).
#define FUSED(name, op, fn, what, shape, cons, ncons, scratch, chain)                                                                   \
    {                                                                                                                                   \
        name, op, op, what, shape, "f32 activations; f32/bf16/f16 weights", RAD_DOMAIN_DEVICE, 0, cons, ncons, 0, fn, nullptr, nullptr, \
            scratch, nullptr, nullptr, chain                                                                                            \
    }

const RadKernelInfo rows[] = {
    ROW("gpu_embed", "embed", gpu::embed, "row gather and widen", "any", 0, c_float_weights, 1, nullptr, nullptr),
    ROW("gpu_rms_norm", "rms_norm", gpu::rms_norm, "block or warp per vector", "any", 0, c_float_weights, 1, nullptr, nullptr),
    ROW("gpu_layer_norm", "layer_norm", gpu::layer_norm, "block per row", "any", 0, c_float_weights, 1, nullptr, nullptr),
    ROW("gpu_gemm_rows", "gemm", gpu::gemm_rows, "weight-streaming gemv, 16-byte loads", "M <= 8", 1, c_few_rows, 2, nullptr, nullptr),
    ROW("gpu_gemm_blas", "gemm", gpu::gemm_blas, "cuBLASLt (x narrowed to the weight type), f32 accumulation", "any M", 0, c_float_weights,
        1, nullptr, gpu::gemm_blas_scratch),
    ROW("gpu_rope", "rope", gpu::rope, "libref's frequencies by value, rotation in place", "rot_dim <= 256", 0, c_rot, 1, nullptr, nullptr),
    ROW("gpu_attention", "attention", gpu::attention, "paged varlen GQA, split context, online softmax", "head_dim <= 256", 0, c_attn, 3,
        nullptr, gpu::attention_scratch),
    FUSED("gpu_rope_attention", "rope_attention", gpu::rope_attention,
          "decode rows: the tensor-core decode kernel turning q and k as it loads them (rot_dim = head_dim); the chain", "head_dim <= 256",
          c_attn, 3, gpu::attention_scratch, "rope,attention"),
    ROW("gpu_swiglu", "swiglu", gpu::swiglu, "silu(gate) * up", "any", 0, nullptr, 0, nullptr, nullptr),
    ROW("gpu_geglu", "geglu", gpu::geglu, "gelu_tanh(gate) * up", "any", 0, nullptr, 0, nullptr, nullptr),
    ROW("gpu_gelu", "gelu", gpu::gelu, "gelu (erf or tanh)", "any", 0, nullptr, 0, nullptr, nullptr),
    ROW("gpu_softcap", "softcap", gpu::softcap, "cap * tanh(x / cap)", "any", 0, nullptr, 0, nullptr, nullptr),
    ROW("gpu_add", "add", gpu::add, "elementwise add", "any", 0, nullptr, 0, nullptr, nullptr),
    ROW("gpu_gather_rows", "gather_rows", gpu::gather_rows, "row copy", "any", 0, nullptr, 0, nullptr, nullptr),
    ROW("gpu_all_reduce_p2p", "all_reduce", gpu::all_reduce_p2p, "one-shot sum in rank order over peer memory, one launch",
        "ranks <= 8 with peer access", 2, c_peers, 2, nullptr, nullptr),
#if RAD_GPU_NCCL
    ROW("gpu_all_reduce_nccl", "all_reduce", gpu::all_reduce_nccl, "ncclAllReduce (sum), communicator per generation", "a card per rank", 1,
        c_distinct, 1, nullptr, gpu::all_reduce_nccl_scratch),
#endif
    ROW("gpu_all_reduce_host", "all_reduce", gpu::all_reduce_staged, "host-staging sum in rank order (rows via the host)", "any", 0,
        nullptr, 0, nullptr, nullptr),
    ROW("gpu_all_gather_p2p", "all_gather", gpu::all_gather_p2p, "every rank's span read over peer memory, one launch",
        "ranks <= 8 with peer access", 2, c_peers, 2, nullptr, nullptr),
#if RAD_GPU_NCCL
    ROW("gpu_all_gather_nccl", "all_gather", gpu::all_gather_nccl, "one ncclBroadcast per rank's span, grouped", "a card per rank", 1,
        c_distinct, 1, nullptr, gpu::all_gather_nccl_scratch),
#endif
    ROW("gpu_all_gather_host", "all_gather", gpu::all_gather_staged, "host staging (rows via the host)", "any", 0, nullptr, 0, nullptr,
        nullptr),
    FUSED("gpu_add_rms_norm", "add_rms_norm", gpu::add_rms_norm, "residual add and rms norm in one launch, rms_norm's shapes", "any",
          c_float_weights, 1, nullptr, "add,rms_norm"),
    FUSED("gpu_gemm_swiglu", "gemm_swiglu", gpu::gemm_swiglu,
          "gate and up rows per warp, silu(gate)*up in the epilogue (M <= 8); "
          "cuBLASLt then swiglu",
          "any M", c_float_weights, 1, gpu::gemm_swiglu_scratch, "gemm,swiglu"),
    FUSED("gpu_gemm_add", "gemm_add", gpu::gemm_add, "the product added into y in the gemv's epilogue (M <= 2); the chain", "any M",
          c_float_weights, 1, gpu::gemm_add_scratch, "gemm,add"),
    // These two scale the gemv's sums by 1 / rms at the end (M <= 2): the chain's value up to
    // rounding, so they name no chain and rad-kbench checks them against libref.
    FUSED("gpu_rms_norm_gemm", "rms_norm_gemm", gpu::rms_norm_gemm,
          "x * nw multiplied and x^2 summed in one pass, the sums scaled by 1 / rms (M <= 2); the chain", "any M", c_float_weights, 1,
          gpu::rms_norm_gemm_scratch, nullptr),
    FUSED("gpu_rms_norm_gemm_swiglu", "rms_norm_gemm_swiglu", gpu::rms_norm_gemm_swiglu,
          "the same norm in gemm_swiglu's gemv (M <= 2); the chain", "any M", c_float_weights, 1, gpu::rms_norm_gemm_swiglu_scratch,
          nullptr),
    ROW("gpu_argmax", "argmax", gpu::argmax, "blocks per row (few rows) or a block per row, lowest index of the largest value", "any", 0,
        nullptr, 0, nullptr, gpu::argmax_scratch),
    ROW("gpu_sample", "sample", gpu::sample, "block per row: radix-select thresholds for top_k / top_p, min_p, a prefix-sum draw", "any", 0,
        nullptr, 0, nullptr, gpu::sample_scratch),
    ROW("gpu_moe_route", "moe_route", gpu::moe_route, "warp per row: softmax, the k largest in libref's order", "k <= 32", 0, c_route, 1,
        nullptr, nullptr),
    ROW("gpu_moe_mlp", "moe_mlp", gpu::moe_mlp,
        "routed rows only: gemvs per (row, pick) for few pairs, else pairs sorted by expert and grouped tiles; ordered combine", "k <= 16",
        0, c_moe, 2, nullptr, gpu::moe_mlp_scratch),
    {"gpu_gemm_q", "gemm_q", "gemm_q",
     "codes streamed (16 bytes a thread step for 1-2 rows, units of 8 codes for 3-8), each chunk's products summed then scaled; bf16 slabs and cuBLASLt for more rows; x gathered by perm",
     "any", "f32 activations; i8/u8/i4/u4/fp8_e4m3 codes", RAD_DOMAIN_DEVICE, 0, c_quant, 2, 0, gpu::gemm_q, nullptr, nullptr,
     gpu::gemm_q_scratch},
    ROW("gpu_gated_add", "gated_add", gpu::gated_add, "block per row", "any", 0, nullptr, 0, nullptr, nullptr),
};
constexpr int kRows = static_cast<int>(sizeof rows / sizeof rows[0]);

}  // namespace

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT

extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {
        RAD_PLUGIN_KERNEL,
        "libgpu",
        "0.1",
        "device kernels: CUDA (sm_90a) / HIP common dialect, cuBLASLt for wide gemms",
#if defined(__HIP_PLATFORM_AMD__)
        "hip"
#else
        "sm_90a"
#endif
    };
    return &info;
}
RAD_EXPORT int rad_plugin_open(const RadMachine* m) { return gpu::open_device(m); }
RAD_EXPORT const RadDeviceApi* rad_kernel_device(void) { return gpu::device_api(); }
RAD_CONVENTIONAL_KERNEL_EXPORTS(rows)
RAD_EXPORT int rad_kernel_collective(int i) {
    if (i < 0 || i >= kRows) return 0;
    const std::string_view op = rows[i].op;
    return op == "all_reduce" || op == "all_gather";
}
// Every row but host staging keeps its work on the queue (peer memory and NCCL included).
RAD_EXPORT int rad_kernel_queued(int i) {
    if (i < 0 || i >= kRows) return 0;
    return rows[i].launch != gpu::all_reduce_staged && rows[i].launch != gpu::all_gather_staged;
}
}
