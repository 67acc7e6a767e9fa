// rad_block_kv.h: an attention's KV group, its dtype parameter and its cache operands, the same
// for every family (llama, gemma, gpt2 and any block built on rad_block_attn.h).
//
// The group takes the deployment's cache dtype (RadBuildCtx.kv_dtype; f32 when the core says
// none). An fp8 cache (RAD_FP8_E4M3) has two more planes, the K and V scales (rad_kv_fp8.h,
// docs/ARCHITECTURE.md "KV planes"), which attention takes as its optional operands 9 and 10;
// `kv_dtype` tells the library rows which cache they will read, so a row that cannot read it
// declines at plan time (a startup error naming the op, never a wrong answer).
#pragma once
#include <radiance/arch/rad_arch.h>
#include <radiance/rad_kv_fp8.h>

namespace radblk {

// The attention cache of n_head_kv heads of head_dim on this rank, named `name`.
inline rad_kv decl_attn_kv(RadBuilder* b, const char* name, const RadBuildCtx* ctx, int64_t n_head_kv, int64_t head_dim) {
    RadKvGroupDecl kvd{};
    kvd.kind = RAD_KV_FULL;
    kvd.dtype = ctx->kv_dtype ? ctx->kv_dtype : RAD_F32;
    kvd.n_head_kv = static_cast<int32_t>(n_head_kv);
    kvd.head_dim = static_cast<int32_t>(head_dim);
    kvd.n_planes = 2;  // K and V; the engine adds an fp8 cache's scale planes by its dtype
    return rad_decl_kv_group(b, name, &kvd);
}

// The cache dtype `attention` / `rope_attention` are told (their `kv_dtype` parameter).
inline int kv_dtype(const RadBuildCtx* ctx) { return ctx->kv_dtype ? ctx->kv_dtype : RAD_F32; }
inline RadParamDecl kv_dtype_param(int dtype) { return RAD_STR("kv_dtype", rad_dtype_name(dtype)); }

// Operands 9 and 10 of attention: layer `layer`'s K or V scales (plane 2 or 3) for an fp8 cache,
// absent otherwise.
inline RadOperandRef kv_scale_ref(rad_kv kv, int layer, int dtype, int which) {
    return rad_kv_has_scales(dtype) ? rad_kvref(kv, layer, 2 + which) : rad_none();
}

}  // namespace radblk
