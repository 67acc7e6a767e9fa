// kv_planes.h: what one block of a KV group costs, every plane counted, so plan_kv's block count
// at a budget follows. An fp8 cache (e4m3 codes and a 4-byte scale a token and kv head) takes
// (hd + 4) / (2 hd) of a bf16 cache's bytes: 1.94x the blocks at head_dim 128.
// Mutation seen failing (2026-12-07): kv_plane_count answering 2 for fp8 (the scales uncounted).
#include <catch2/catch.hpp>

#include "kv_planes.h"

using namespace radiance::engine;

namespace {
RadKvGroupDecl group(int dtype, int heads, int hd) {
    RadKvGroupDecl d{};
    d.kind = RAD_KV_FULL;
    d.dtype = dtype;
    d.n_head_kv = heads;
    d.head_dim = hd;
    d.n_planes = 2;
    return d;
}
}  // namespace

TEST_CASE("kv planes: an fp8 group has K and V codes and their scales", "[kv]") {
    const RadKvGroupDecl fp8 = group(RAD_FP8_E4M3, 8, 128), bf16 = group(RAD_BF16, 8, 128);
    CHECK(kv_plane_count(bf16) == 2);
    CHECK(kv_plane_count(fp8) == 4);
    CHECK(kv_plane_dtype(fp8, 0) == RAD_FP8_E4M3);
    CHECK(kv_plane_dtype(fp8, 3) == RAD_F32);
    CHECK(kv_plane_token_bytes(fp8, 1) == 8 * 128);
    CHECK(kv_plane_token_bytes(fp8, 2) == 8 * 4);
    CHECK(kv_layer_block_bytes(bf16, 16) == 16 * 2 * 8 * 128 * 2);
    CHECK(kv_layer_block_bytes(fp8, 16) == 16 * 2 * 8 * (128 + 4));
    // Llama 3 8B's kv heads: ~1.94x the blocks of bf16 in the same memory, ~3.88x those of f32
    const double ratio = static_cast<double>(kv_layer_block_bytes(bf16, 16)) / static_cast<double>(kv_layer_block_bytes(fp8, 16));
    CHECK(ratio == Approx(1.939).epsilon(0.001));
    CHECK(kv_layer_block_bytes(group(RAD_F32, 8, 128), 16) == 2 * kv_layer_block_bytes(bf16, 16));
}
