// kv_planes.h: the byte layout of a KV group's planes, for plan_kv (allocation and the budget's
// block count) and make_tensor (the operands an architecture names with rad_kvref).
//
// Every group has a K and a V plane, [blocks, block, n_head_kv, head_dim] of the group's dtype
// (planes 0 and 1). A group of an 8-bit float (the fp8 KV cache) has two more: the K and V scales,
// f32 [blocks, block, n_head_kv] (planes 2 and 3), one a (token, kv head) as rad_kv_fp8.h makes
// them. Kept apart from the allocation so the accounting (what one block costs, so how many fit a
// budget) is checked without a model (tests/unit/engine/test_kv_planes.cpp).
#pragma once
#include <cstdint>
#include <vector>

#include "radiance/rad_abi.h"
#include "radiance/rad_kv_fp8.h"

namespace radiance::engine {

constexpr int kMaxKvPlanes = 4;

inline int kv_plane_count(const RadKvGroupDecl& d) { return rad_kv_has_scales(d.dtype) ? 4 : 2; }

// The dtype and bytes of one token's row of plane `plane` (0 K, 1 V, 2 K scale, 3 V scale).
inline int kv_plane_dtype(const RadKvGroupDecl& d, int plane) { return plane < 2 ? d.dtype : RAD_F32; }
inline uint64_t kv_plane_token_bytes(const RadKvGroupDecl& d, int plane) {
    const uint64_t heads = static_cast<uint64_t>(d.n_head_kv);
    if (plane >= 2) return heads * 4;
    return heads * static_cast<uint64_t>(d.head_dim) * static_cast<uint64_t>(rad_dtype_bits(d.dtype)) / 8;
}

// One block of `block` tokens of one layer of the group, every plane.
inline uint64_t kv_layer_block_bytes(const RadKvGroupDecl& d, int block) {
    uint64_t b = 0;
    for (int p = 0; p < kv_plane_count(d); ++p) b += kv_plane_token_bytes(d, p);
    return b * static_cast<uint64_t>(block);
}

}  // namespace radiance::engine
