/* rad_ops.h: the schemas of the conventional op vocabulary (docs/OPS.md is their prose).
 *
 * Header-only data a kernel library returns from rad_kernel_schema_at, so every library declares
 * the same op identically (the first library in the hierarchy fixes a schema, and a differing one
 * is refused). ctest -R ops_doc checks docs/OPS.md against these tables.
 *
 * Conventions: activations are row-major with a row pitch (RadTensor.row_pitch); the ranged
 * parameter is the row count of the step (`n`, or `M` for gemm); every op reads f32 activations
 * and writes f32 unless its `act` parameter says otherwise. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_RAD_OPS_H
#define RADIANCE_RAD_OPS_H

#include "rad_plugin.h"

#define RAD_PI(name, need) \
    { name, RAD_P_INT, need, RAD_PROLE_NONE }
#define RAD_PF(name, need) \
    { name, RAD_P_F64, need, RAD_PROLE_NONE }
#define RAD_PS(name, need) \
    { name, RAD_P_STR, need, RAD_PROLE_NONE }
#define RAD_N_OF(a) ((int32_t)(sizeof(a) / sizeof((a)[0])))

static const RadParamSpec rad_op_embed_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED), RAD_PI("vocab", RAD_REQUIRED),
                                                   RAD_PS("wdtype", RAD_REQUIRED), RAD_PF("scale", RAD_OPTIONAL)};
static const RadOperandSpec rad_op_embed_opds[] = {{"ids", RAD_OPD_IN, 0}, {"table", RAD_OPD_WTAB, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_rms_norm_params[] = {RAD_PI("n", RAD_REQUIRED),           RAD_PI("dim", RAD_REQUIRED),
                                                      RAD_PI("groups", RAD_OPTIONAL),      RAD_PF("eps", RAD_REQUIRED),
                                                      RAD_PI("unit_offset", RAD_OPTIONAL), RAD_PS("wdtype", RAD_REQUIRED)};
static const RadOperandSpec rad_op_rms_norm_opds[] = {{"x", RAD_OPD_IN, 0}, {"w", RAD_OPD_WEIGHT, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_layer_norm_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED), RAD_PF("eps", RAD_REQUIRED),
                                                        RAD_PS("wdtype", RAD_REQUIRED)};
static const RadOperandSpec rad_op_layer_norm_opds[] = {
    {"x", RAD_OPD_IN, 0}, {"w", RAD_OPD_WEIGHT, 0}, {"b", RAD_OPD_WEIGHT, 1}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_gemm_params[] = {RAD_PI("M", RAD_REQUIRED), RAD_PI("N", RAD_REQUIRED), RAD_PI("K", RAD_REQUIRED),
                                                  RAD_PS("wdtype", RAD_REQUIRED)};
static const RadOperandSpec rad_op_gemm_opds[] = {
    {"x", RAD_OPD_IN, 0}, {"w", RAD_OPD_WEIGHT, 0}, {"bias", RAD_OPD_WEIGHT, 1}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_rope_params[] = {RAD_PI("n", RAD_REQUIRED),
                                                  RAD_PI("n_head", RAD_REQUIRED),
                                                  RAD_PI("head_dim", RAD_REQUIRED),
                                                  RAD_PI("rot_dim", RAD_REQUIRED),
                                                  RAD_PF("theta", RAD_REQUIRED),
                                                  RAD_PS("layout", RAD_REQUIRED),
                                                  RAD_PS("scaling", RAD_REQUIRED),
                                                  RAD_PF("factor", RAD_OPTIONAL),
                                                  RAD_PF("low_freq_factor", RAD_OPTIONAL),
                                                  RAD_PF("high_freq_factor", RAD_OPTIONAL),
                                                  RAD_PI("orig_ctx", RAD_OPTIONAL),
                                                  RAD_PF("beta_fast", RAD_OPTIONAL),
                                                  RAD_PF("beta_slow", RAD_OPTIONAL),
                                                  RAD_PF("attn_factor", RAD_OPTIONAL),
                                                  RAD_PS("short_factor", RAD_OPTIONAL),
                                                  RAD_PS("long_factor", RAD_OPTIONAL)};
static const RadOperandSpec rad_op_rope_opds[] = {{"x", RAD_OPD_INOUT, 0}, {"pos", RAD_OPD_IN, 0}, {"cu_seqlens", RAD_OPD_IN, 1}};

static const RadParamSpec rad_op_attention_params[] = {
    RAD_PI("n", RAD_REQUIRED),     RAD_PI("n_head", RAD_REQUIRED), RAD_PI("n_head_kv", RAD_REQUIRED), RAD_PI("head_dim", RAD_REQUIRED),
    RAD_PF("scale", RAD_REQUIRED), RAD_PI("window", RAD_OPTIONAL), RAD_PF("softcap", RAD_OPTIONAL),   RAD_PI("block", RAD_DERIVED),
    RAD_PS("kv_dtype", RAD_OPTIONAL)};
/* k_scale and v_scale (an fp8 cache's per-token, per-head scales, rad_kv_fp8.h) come last, after
 * y, so that callers written before them keep their operand positions. kv_dtype names the cache's
 * dtype so that a row can decline, at plan time, a cache it cannot read. */
static const RadOperandSpec rad_op_attention_opds[] = {
    {"q", RAD_OPD_IN, 0},          {"k", RAD_OPD_IN, 0},          {"v", RAD_OPD_IN, 0},          {"k_cache", RAD_OPD_INOUT, 0},
    {"v_cache", RAD_OPD_INOUT, 0}, {"pos", RAD_OPD_IN, 0},        {"cu_seqlens", RAD_OPD_IN, 0}, {"block_tables", RAD_OPD_IN, 0},
    {"y", RAD_OPD_OUT, 0},         {"k_scale", RAD_OPD_INOUT, 1}, {"v_scale", RAD_OPD_INOUT, 1}};

static const RadParamSpec rad_op_glu_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED)};
static const RadOperandSpec rad_op_glu_opds[] = {{"x", RAD_OPD_IN, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_gelu_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED), RAD_PS("approx", RAD_REQUIRED)};
static const RadOperandSpec rad_op_gelu_opds[] = {{"x", RAD_OPD_IN, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_softcap_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED), RAD_PF("cap", RAD_REQUIRED)};
static const RadOperandSpec rad_op_softcap_opds[] = {{"x", RAD_OPD_IN, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_add_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED)};
static const RadOperandSpec rad_op_add_opds[] = {{"a", RAD_OPD_IN, 0}, {"b", RAD_OPD_IN, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_gather_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED)};
static const RadOperandSpec rad_op_gather_opds[] = {{"x", RAD_OPD_IN, 0}, {"ids", RAD_OPD_IN, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_all_reduce_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED)};
static const RadOperandSpec rad_op_all_reduce_opds[] = {{"x", RAD_OPD_INOUT, 0}};

static const RadParamSpec rad_op_all_gather_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("total", RAD_REQUIRED)};
static const RadOperandSpec rad_op_all_gather_opds[] = {{"x", RAD_OPD_IN, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_argmax_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("vocab", RAD_REQUIRED)};
/* argmax and sample take structured output's optional `mask` (u32 [n, (vocab + 31) / 32]): a token
 * whose bit is clear counts as -inf. */
static const RadOperandSpec rad_op_argmax_opds[] = {{"x", RAD_OPD_IN, 0}, {"y", RAD_OPD_OUT, 0}, {"mask", RAD_OPD_IN, 1}};

static const RadParamSpec rad_op_sample_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("vocab", RAD_REQUIRED)};
static const RadOperandSpec rad_op_sample_opds[] = {
    {"x", RAD_OPD_IN, 0}, {"cfg", RAD_OPD_IN, 0}, {"u", RAD_OPD_IN, 0}, {"y", RAD_OPD_OUT, 0}, {"mask", RAD_OPD_IN, 1}};

static const RadParamSpec rad_op_add_rms_norm_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED),
                                                          RAD_PF("eps", RAD_REQUIRED), RAD_PI("unit_offset", RAD_OPTIONAL),
                                                          RAD_PS("wdtype", RAD_REQUIRED)};
static const RadOperandSpec rad_op_add_rms_norm_opds[] = {
    {"x", RAD_OPD_INOUT, 0}, {"r", RAD_OPD_IN, 0}, {"w", RAD_OPD_WEIGHT, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_gemm_swiglu_params[] = {RAD_PI("M", RAD_REQUIRED), RAD_PI("N", RAD_REQUIRED), RAD_PI("K", RAD_REQUIRED),
                                                         RAD_PS("wdtype", RAD_REQUIRED)};
static const RadOperandSpec rad_op_gemm_swiglu_opds[] = {{"x", RAD_OPD_IN, 0}, {"w", RAD_OPD_WEIGHT, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_gemm_add_params[] = {RAD_PI("M", RAD_REQUIRED), RAD_PI("N", RAD_REQUIRED), RAD_PI("K", RAD_REQUIRED),
                                                      RAD_PS("wdtype", RAD_REQUIRED)};
static const RadOperandSpec rad_op_gemm_add_opds[] = {
    {"x", RAD_OPD_IN, 0}, {"w", RAD_OPD_WEIGHT, 0}, {"bias", RAD_OPD_WEIGHT, 1}, {"y", RAD_OPD_INOUT, 0}};

static const RadParamSpec rad_op_rms_norm_gemm_params[] = {RAD_PI("M", RAD_REQUIRED),           RAD_PI("N", RAD_REQUIRED),
                                                           RAD_PI("K", RAD_REQUIRED),           RAD_PF("eps", RAD_REQUIRED),
                                                           RAD_PI("unit_offset", RAD_OPTIONAL), RAD_PS("wdtype", RAD_REQUIRED)};
static const RadOperandSpec rad_op_rms_norm_gemm_opds[] = {
    {"x", RAD_OPD_IN, 0}, {"nw", RAD_OPD_WEIGHT, 0}, {"w", RAD_OPD_WEIGHT, 0}, {"bias", RAD_OPD_WEIGHT, 1}, {"y", RAD_OPD_OUT, 0}};
static const RadOperandSpec rad_op_rms_norm_gemm_swiglu_opds[] = {
    {"x", RAD_OPD_IN, 0}, {"nw", RAD_OPD_WEIGHT, 0}, {"w", RAD_OPD_WEIGHT, 0}, {"y", RAD_OPD_OUT, 0}};

/* rope on q and k in place (every head, the step's positions), then attention: the rotation in
 * the attention's own launch where a library can. attention's parameters and rope's but its
 * row count and head count (n and n_head are attention's; rope turns n_head q heads and n_head_kv
 * k heads of head_dim). */
static const RadParamSpec rad_op_rope_attention_params[] = {RAD_PI("n", RAD_REQUIRED),
                                                            RAD_PI("n_head", RAD_REQUIRED),
                                                            RAD_PI("n_head_kv", RAD_REQUIRED),
                                                            RAD_PI("head_dim", RAD_REQUIRED),
                                                            RAD_PF("scale", RAD_REQUIRED),
                                                            RAD_PI("window", RAD_OPTIONAL),
                                                            RAD_PF("softcap", RAD_OPTIONAL),
                                                            RAD_PI("block", RAD_DERIVED),
                                                            RAD_PI("rot_dim", RAD_REQUIRED),
                                                            RAD_PF("theta", RAD_REQUIRED),
                                                            RAD_PS("layout", RAD_REQUIRED),
                                                            RAD_PS("scaling", RAD_REQUIRED),
                                                            RAD_PF("factor", RAD_OPTIONAL),
                                                            RAD_PF("low_freq_factor", RAD_OPTIONAL),
                                                            RAD_PF("high_freq_factor", RAD_OPTIONAL),
                                                            RAD_PI("orig_ctx", RAD_OPTIONAL),
                                                            RAD_PF("beta_fast", RAD_OPTIONAL),
                                                            RAD_PF("beta_slow", RAD_OPTIONAL),
                                                            RAD_PF("attn_factor", RAD_OPTIONAL),
                                                            RAD_PS("short_factor", RAD_OPTIONAL),
                                                            RAD_PS("long_factor", RAD_OPTIONAL),
                                                            RAD_PS("kv_dtype", RAD_OPTIONAL)};
static const RadOperandSpec rad_op_rope_attention_opds[] = {
    {"q", RAD_OPD_INOUT, 0},       {"k", RAD_OPD_INOUT, 0},         {"v", RAD_OPD_IN, 0},
    {"k_cache", RAD_OPD_INOUT, 0}, {"v_cache", RAD_OPD_INOUT, 0},   {"pos", RAD_OPD_IN, 0},
    {"cu_seqlens", RAD_OPD_IN, 0}, {"block_tables", RAD_OPD_IN, 0}, {"y", RAD_OPD_OUT, 0},
    {"k_scale", RAD_OPD_INOUT, 1}, {"v_scale", RAD_OPD_INOUT, 1}};

static const RadParamSpec rad_op_moe_route_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("experts", RAD_REQUIRED),
                                                       RAD_PI("k", RAD_REQUIRED), RAD_PI("norm", RAD_OPTIONAL)};
static const RadOperandSpec rad_op_moe_route_opds[] = {{"logits", RAD_OPD_IN, 0}, {"ids", RAD_OPD_OUT, 0}, {"w", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_moe_mlp_params[] = {RAD_PI("n", RAD_REQUIRED),  RAD_PI("dim", RAD_REQUIRED),
                                                     RAD_PI("ff", RAD_REQUIRED), RAD_PI("experts", RAD_REQUIRED),
                                                     RAD_PI("k", RAD_REQUIRED),  RAD_PS("wdtype", RAD_REQUIRED)};
static const RadOperandSpec rad_op_moe_mlp_opds[] = {{"x", RAD_OPD_IN, 0},           {"ids", RAD_OPD_IN, 0},      {"w", RAD_OPD_IN, 0},
                                                     {"gate_up", RAD_OPD_WEIGHT, 0}, {"down", RAD_OPD_WEIGHT, 0}, {"y", RAD_OPD_OUT, 0}};

static const RadParamSpec rad_op_gated_add_params[] = {RAD_PI("n", RAD_REQUIRED), RAD_PI("dim", RAD_REQUIRED)};
static const RadOperandSpec rad_op_gated_add_opds[] = {{"x", RAD_OPD_IN, 0}, {"g", RAD_OPD_IN, 0}, {"y", RAD_OPD_INOUT, 0}};

/* A weight-only quantised projection: the planes of the affine scheme (rad_decode.h) as operands.
 * `min` (a GGUF K-quant's offset, in the value's domain) and `perm` (the perm transform's table,
 * GPTQ act-order: x gathered by it) come last, after y, so that callers written before them keep
 * their operand positions. */
static const RadParamSpec rad_op_gemm_q_params[] = {
    RAD_PI("M", RAD_REQUIRED),     RAD_PI("N", RAD_REQUIRED),          RAD_PI("K", RAD_REQUIRED),     RAD_PS("qtype", RAD_REQUIRED),
    RAD_PI("group", RAD_REQUIRED), RAD_PI("group_rows", RAD_REQUIRED), RAD_PS("sdtype", RAD_REQUIRED)};
static const RadOperandSpec rad_op_gemm_q_opds[] = {{"x", RAD_OPD_IN, 0},        {"w", RAD_OPD_WEIGHT, 0},    {"scale", RAD_OPD_WEIGHT, 0},
                                                    {"zero", RAD_OPD_WEIGHT, 1}, {"bias", RAD_OPD_WEIGHT, 1}, {"y", RAD_OPD_OUT, 0},
                                                    {"min", RAD_OPD_WEIGHT, 1},  {"perm", RAD_OPD_WEIGHT, 1}};

/* The vocabulary, in the order docs/OPS.md lists it. */
static const RadOpSchema rad_ops_conventional[] = {
    {"embed", rad_op_embed_params, RAD_N_OF(rad_op_embed_params), rad_op_embed_opds, RAD_N_OF(rad_op_embed_opds),
     "y[i] = table[ids[i]] * scale"},
    {"rms_norm", rad_op_rms_norm_params, RAD_N_OF(rad_op_rms_norm_params), rad_op_rms_norm_opds, RAD_N_OF(rad_op_rms_norm_opds),
     "y = x / sqrt(mean(x^2) + eps) * (w or 1 + w), per group of dim"},
    {"layer_norm", rad_op_layer_norm_params, RAD_N_OF(rad_op_layer_norm_params), rad_op_layer_norm_opds, RAD_N_OF(rad_op_layer_norm_opds),
     "y = (x - mean) / sqrt(var + eps) * w + b"},
    {"gemm", rad_op_gemm_params, RAD_N_OF(rad_op_gemm_params), rad_op_gemm_opds, RAD_N_OF(rad_op_gemm_opds),
     "y[M,N] = x[M,K] . w[N,K]^T + bias, f32 accumulation"},
    {"rope", rad_op_rope_params, RAD_N_OF(rad_op_rope_params), rad_op_rope_opds, RAD_N_OF(rad_op_rope_opds),
     "rotary position embedding in place, per head, neox or gptj pairs, scaled frequencies"},
    {"attention", rad_op_attention_params, RAD_N_OF(rad_op_attention_params), rad_op_attention_opds, RAD_N_OF(rad_op_attention_opds),
     "store k,v in the paged cache, then causal (windowed) GQA attention"},
    {"swiglu", rad_op_glu_params, RAD_N_OF(rad_op_glu_params), rad_op_glu_opds, RAD_N_OF(rad_op_glu_opds),
     "y = silu(x[:, :dim]) * x[:, dim:]"},
    {"geglu", rad_op_glu_params, RAD_N_OF(rad_op_glu_params), rad_op_glu_opds, RAD_N_OF(rad_op_glu_opds),
     "y = gelu_tanh(x[:, :dim]) * x[:, dim:]"},
    {"gelu", rad_op_gelu_params, RAD_N_OF(rad_op_gelu_params), rad_op_gelu_opds, RAD_N_OF(rad_op_gelu_opds),
     "y = gelu(x), exact (erf) or tanh"},
    {"softcap", rad_op_softcap_params, RAD_N_OF(rad_op_softcap_params), rad_op_softcap_opds, RAD_N_OF(rad_op_softcap_opds),
     "y = cap * tanh(x / cap) (y may alias x)"},
    {"add", rad_op_add_params, RAD_N_OF(rad_op_add_params), rad_op_add_opds, RAD_N_OF(rad_op_add_opds), "y = a + b (y may alias a)"},
    {"gather_rows", rad_op_gather_params, RAD_N_OF(rad_op_gather_params), rad_op_gather_opds, RAD_N_OF(rad_op_gather_opds),
     "y[i] = x[ids[i]]"},
    {"all_reduce", rad_op_all_reduce_params, RAD_N_OF(rad_op_all_reduce_params), rad_op_all_reduce_opds, RAD_N_OF(rad_op_all_reduce_opds),
     "x = sum over ranks of x, in rank order, the same bytes on every rank"},
    {"all_gather", rad_op_all_gather_params, RAD_N_OF(rad_op_all_gather_params), rad_op_all_gather_opds, RAD_N_OF(rad_op_all_gather_opds),
     "y[:, span(r)] = x of rank r: every rank gets every rank's columns"},
    {"argmax", rad_op_argmax_params, RAD_N_OF(rad_op_argmax_params), rad_op_argmax_opds, RAD_N_OF(rad_op_argmax_opds),
     "y[i] = the lowest index of the largest value of row i (greedy sampling where the logits are)"},
    {"sample", rad_op_sample_params, RAD_N_OF(rad_op_sample_params), rad_op_sample_opds, RAD_N_OF(rad_op_sample_opds),
     "y[i] = the token drawn from row i with temperature, top_k, top_p, min_p and the uniform u[i]"},
    {"add_rms_norm", rad_op_add_rms_norm_params, RAD_N_OF(rad_op_add_rms_norm_params), rad_op_add_rms_norm_opds,
     RAD_N_OF(rad_op_add_rms_norm_opds), "x = x + r, then y = rms_norm(x) (the residual add and the next norm)"},
    {"gemm_swiglu", rad_op_gemm_swiglu_params, RAD_N_OF(rad_op_gemm_swiglu_params), rad_op_gemm_swiglu_opds,
     RAD_N_OF(rad_op_gemm_swiglu_opds), "y = silu(x . w[:N]^T) * (x . w[N:]^T): a stacked [gate|up] projection and swiglu"},
    {"gemm_add", rad_op_gemm_add_params, RAD_N_OF(rad_op_gemm_add_params), rad_op_gemm_add_opds, RAD_N_OF(rad_op_gemm_add_opds),
     "y = y + (x . w^T + bias): a projection added into the residual stream"},
    {"rms_norm_gemm", rad_op_rms_norm_gemm_params, RAD_N_OF(rad_op_rms_norm_gemm_params), rad_op_rms_norm_gemm_opds,
     RAD_N_OF(rad_op_rms_norm_gemm_opds), "y = rms_norm(x, nw) . w^T + bias: a norm and the projection after it"},
    {"rms_norm_gemm_swiglu", rad_op_rms_norm_gemm_params, RAD_N_OF(rad_op_rms_norm_gemm_params), rad_op_rms_norm_gemm_swiglu_opds,
     RAD_N_OF(rad_op_rms_norm_gemm_swiglu_opds), "y = gemm_swiglu(rms_norm(x, nw), w): a norm and the gated MLP's projection after it"},
    {"rope_attention", rad_op_rope_attention_params, RAD_N_OF(rad_op_rope_attention_params), rad_op_rope_attention_opds,
     RAD_N_OF(rad_op_rope_attention_opds), "rope on q and k in place, then attention: the rotation inside the attention"},
    {"moe_route", rad_op_moe_route_params, RAD_N_OF(rad_op_moe_route_params), rad_op_moe_route_opds, RAD_N_OF(rad_op_moe_route_opds),
     "ids, w = the k most probable experts of softmax(logits) and their probabilities (renormalised over the k with norm)"},
    {"moe_mlp", rad_op_moe_mlp_params, RAD_N_OF(rad_op_moe_mlp_params), rad_op_moe_mlp_opds, RAD_N_OF(rad_op_moe_mlp_opds),
     "y = sum over the picked experts e of w * down_e(swiglu(gate_up_e . x)): the routed experts' MLPs, weighted"},
    {"gated_add", rad_op_gated_add_params, RAD_N_OF(rad_op_gated_add_params), rad_op_gated_add_opds, RAD_N_OF(rad_op_gated_add_opds),
     "y = y + sigmoid(g) * x, one gate a row (a shared expert joining the routed ones)"},
    {"gemm_q", rad_op_gemm_q_params, RAD_N_OF(rad_op_gemm_q_params), rad_op_gemm_q_opds, RAD_N_OF(rad_op_gemm_q_opds),
     "y = x[perm] . ((w - zero) * scale - min)^T + bias: gemm over a weight stored as codes, a scale per group, a zero point, a minimum "
     "and a column order"},
};
#define RAD_OPS_CONVENTIONAL_COUNT RAD_N_OF(rad_ops_conventional)

/* The four table exports of a kernel library that declares the conventional schemas and whose
 * rows are the array `rows` (inside extern "C" in C++). */
#define RAD_CONVENTIONAL_KERNEL_EXPORTS(rows)                                           \
    RAD_EXPORT int rad_kernel_schema_count(void) { return RAD_OPS_CONVENTIONAL_COUNT; } \
    RAD_EXPORT const RadOpSchema* rad_kernel_schema_at(int i) {                         \
        return i >= 0 && i < RAD_OPS_CONVENTIONAL_COUNT ? &rad_ops_conventional[i] : 0; \
    }                                                                                   \
    RAD_EXPORT int rad_kernel_count(void) { return RAD_N_OF(rows); }                    \
    RAD_EXPORT const RadKernelInfo* rad_kernel_at(int i) { return i >= 0 && i < RAD_N_OF(rows) ? &(rows)[i] : 0; }

#endif
