/* rad_abi_layout.h: the ABI layout fingerprint.
 *
 * A hash of the size and field offsets of every struct a plugin and the engine exchange, computed
 * by the compiler that builds the plugin. Two builds agreeing on RAD_ABI_VERSION but compiled
 * against different headers (another tree, another packing) disagree here, and the loader
 * refuses the plugin with both values printed. Every public ABI header is this file plus its own part,
 * so the list below always sees every struct. */
/* Plain C: every plugin compiles this header, whatever its own language. */
#ifndef RADIANCE_RAD_ABI_LAYOUT_H
#define RADIANCE_RAD_ABI_LAYOUT_H

#include "detail/abi_core.h"
#include "detail/plugin_core.h"
#include "detail/quant_core.h"
#include "detail/arch_core.h"
#include "detail/device_core.h"

#define RAD_L_STRUCT(T) (uint64_t)sizeof(T), (uint64_t) _Alignof(T)
#define RAD_L_FIELD(T, f) (uint64_t) offsetof(T, f)

#ifdef __cplusplus
#define _Alignof alignof
#endif

/* One entry per size, alignment and offset; order matters (it is hashed as a sequence). */
#define RAD_ABI_LAYOUT_ITEMS                                                                                                               \
    RAD_L_STRUCT(RadTensor), RAD_L_FIELD(RadTensor, dtype), RAD_L_FIELD(RadTensor, shape), RAD_L_FIELD(RadTensor, row_pitch),              \
        RAD_L_STRUCT(RadPlaneDesc), RAD_L_FIELD(RadPlaneDesc, kind), RAD_L_FIELD(RadPlaneDesc, block_r), RAD_L_FIELD(RadPlaneDesc, cols),  \
        RAD_L_STRUCT(RadEncoding), RAD_L_FIELD(RadEncoding, transform), RAD_L_FIELD(RadEncoding, n_planes),                                \
        RAD_L_FIELD(RadEncoding, planes), RAD_L_STRUCT(RadPluginInfo), RAD_L_FIELD(RadPluginInfo, name),                                   \
        RAD_L_FIELD(RadPluginInfo, build_target), RAD_L_STRUCT(RadMachine), RAD_L_FIELD(RadMachine, host_cores),                           \
        RAD_L_STRUCT(RadParamSpec), RAD_L_FIELD(RadParamSpec, role), RAD_L_STRUCT(RadOperandSpec), RAD_L_FIELD(RadOperandSpec, optional),  \
        RAD_L_STRUCT(RadOpSchema), RAD_L_FIELD(RadOpSchema, operands), RAD_L_FIELD(RadOpSchema, doc), RAD_L_STRUCT(RadConstraint),         \
        RAD_L_FIELD(RadConstraint, value), RAD_L_FIELD(RadConstraint, set), RAD_L_STRUCT(RadParam), RAD_L_FIELD(RadParam, i),              \
        RAD_L_FIELD(RadParam, f), RAD_L_FIELD(RadParam, s), RAD_L_STRUCT(RadArgs), RAD_L_FIELD(RadArgs, p),                                \
        RAD_L_FIELD(RadArgs, instance), RAD_L_FIELD(RadArgs, stream), RAD_L_FIELD(RadArgs, comm), RAD_L_STRUCT(RadKernelInfo),             \
        RAD_L_FIELD(RadKernelInfo, domain), RAD_L_FIELD(RadKernelInfo, constraints), RAD_L_FIELD(RadKernelInfo, launch),                   \
        RAD_L_FIELD(RadKernelInfo, relayout), RAD_L_FIELD(RadKernelInfo, replaces), RAD_L_STRUCT(RadQuantOption),                          \
        RAD_L_STRUCT(RadQuantInput), RAD_L_FIELD(RadQuantInput, data), RAD_L_STRUCT(RadQuantizerInfo),                                     \
        RAD_L_FIELD(RadQuantizerInfo, encoding), RAD_L_FIELD(RadQuantizerInfo, decode), RAD_L_STRUCT(RadModelMeta),                        \
        RAD_L_FIELD(RadModelMeta, head_dim), RAD_L_FIELD(RadModelMeta, rms_eps), RAD_L_FIELD(RadModelMeta, kv_key),                        \
        RAD_L_FIELD(RadModelMeta, n_kv), RAD_L_STRUCT(RadBuildCtx), RAD_L_FIELD(RadBuildCtx, max_tok), RAD_L_FIELD(RadBuildCtx, reserved), \
        RAD_L_STRUCT(RadWeightDecl), RAD_L_FIELD(RadWeightDecl, shape), RAD_L_FIELD(RadWeightDecl, row_parts),                             \
        RAD_L_FIELD(RadWeightDecl, planes), RAD_L_STRUCT(RadBufDecl), RAD_L_FIELD(RadBufDecl, derive), RAD_L_STRUCT(RadKvGroupDecl),       \
        RAD_L_FIELD(RadKvGroupDecl, window), RAD_L_STRUCT(RadNameMapEntry), RAD_L_FIELD(RadNameMapEntry, sources),                         \
        RAD_L_STRUCT(RadParamDecl), RAD_L_FIELD(RadParamDecl, hi), RAD_L_FIELD(RadParamDecl, s), RAD_L_STRUCT(RadBuilderApi),              \
        RAD_L_FIELD(RadBuilderApi, decl_op), RAD_L_FIELD(RadBuilderApi, weight_encoding), RAD_L_FIELD(RadBuilderApi, declare_pooled),      \
        RAD_L_STRUCT(RadBatch), RAD_L_FIELD(RadBatch, token_ids), RAD_L_FIELD(RadBatch, block_tables), RAD_L_FIELD(RadBatch, reserved_p),  \
        RAD_L_FIELD(RadBatch, n_hidden), RAD_L_FIELD(RadBatch, hidden_ids), RAD_L_STRUCT(RadOperandRef), RAD_L_FIELD(RadOperandRef, rows), \
        RAD_L_FIELD(RadOperandRef, ptr), RAD_L_STRUCT(RadCtxApi), RAD_L_FIELD(RadCtxApi, status), RAD_L_STRUCT(RadComm),                   \
        RAD_L_FIELD(RadComm, staging), RAD_L_FIELD(RadComm, barrier), RAD_L_FIELD(RadComm, device_comm), RAD_L_FIELD(RadComm, aborted),    \
        RAD_L_STRUCT(RadDeviceApi), RAD_L_FIELD(RadDeviceApi, memory_bytes), RAD_L_FIELD(RadDeviceApi, alloc),                             \
        RAD_L_FIELD(RadDeviceApi, graph_launch), RAD_L_FIELD(RadDeviceApi, last_error), RAD_L_FIELD(RadDeviceApi, peer_cards),             \
        RAD_L_FIELD(RadDeviceApi, cards), RAD_L_FIELD(RadDeviceApi, mark_wait)

#ifdef __cplusplus
namespace rad_abi_detail {
constexpr uint64_t rad_layout_items[] = {RAD_ABI_LAYOUT_ITEMS};
constexpr uint64_t layout_hash() {
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the 8 bytes of each item */
    for (uint64_t v : rad_layout_items)
        for (int b = 0; b < 8; ++b) {
            h ^= (v >> (8 * b)) & 0xffu;
            h *= 1099511628211ull;
        }
    return h ^ (uint64_t)RAD_ABI_VERSION;
}
}  // namespace rad_abi_detail
/* The fingerprint of the headers this translation unit was compiled against. */
#define RAD_ABI_LAYOUT_FINGERPRINT (rad_abi_detail::layout_hash())
#define RAD_PLUGIN_ABI_LAYOUT_EXPORT                             \
    extern "C" RAD_EXPORT uint64_t rad_plugin_abi_layout(void) { \
        constexpr uint64_t v = RAD_ABI_LAYOUT_FINGERPRINT;       \
        return v;                                                \
    }
#else
static inline uint64_t rad_abi_layout_fingerprint_c(void) {
    static const uint64_t items[] = {RAD_ABI_LAYOUT_ITEMS};
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof items / sizeof items[0]; ++i)
        for (int b = 0; b < 8; ++b) {
            h ^= (items[i] >> (8 * b)) & 0xffu;
            h *= 1099511628211ull;
        }
    return h ^ (uint64_t)RAD_ABI_VERSION;
}
#define RAD_ABI_LAYOUT_FINGERPRINT (rad_abi_layout_fingerprint_c())
#define RAD_PLUGIN_ABI_LAYOUT_EXPORT \
    RAD_EXPORT uint64_t rad_plugin_abi_layout(void) { return RAD_ABI_LAYOUT_FINGERPRINT; }
#endif

#endif
