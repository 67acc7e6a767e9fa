// k_rope.h: rope as libgpu's kernels share it. The rope row and rope_attention's decode kernel
// take the same frequency table and turn a pair with the same arithmetic, so the fused op makes
// the bytes of rope followed by attention (rad-kbench checks it against that chain).
#pragma once
#include "k_common.h"

namespace gpu {

constexpr int kRopeMaxHalf = 128;  // rot_dim <= 256

// libref's frequencies (rad_rope_freqs.h, computed on the host) passed to a kernel by value, so
// no launch reads host memory and a recorded graph replays with the same frequencies.
struct RopeTable {
    float inv[kRopeMaxHalf];
    float attn;  // cos / sin multiplier (yarn's and longrope's attention factor)
    int half;    // rot_dim / 2
    int neox;    // pairs (j, j + half); else (2j, 2j + 1)
    // longrope: a row whose sequence reaches long_from in the step turns by inv_long
    // (rad_rope_row_is_long); -1 for every other scaling. Only k_rope reads them: rope_attention
    // takes longrope through its chain.
    int long_from;
    float inv_long[kRopeMaxHalf];
};

// The op's table for rot_dim `rot`; false where the scaling is unknown or rot_dim is past the table.
bool rope_table(const RadArgs* a, int64_t rot, RopeTable* t);

// The pair (va, vb) turned by (c, s): each product rounded before the sum (no fused multiply-add
// for the compiler to place differently in different kernels).
__device__ __forceinline__ float rope_first(float va, float vb, float c, float s) { return __fsub_rn(__fmul_rn(va, c), __fmul_rn(vb, s)); }
__device__ __forceinline__ float rope_second(float va, float vb, float c, float s) { return __fadd_rn(__fmul_rn(vb, c), __fmul_rn(va, s)); }
// cos and sin of position p's angle for pair j (by the long frequencies where `long_row`), times
// the table's multiplier.
__device__ __forceinline__ void rope_angle(const RopeTable& t, int32_t p, int j, float& c, float& s, bool long_row = false) {
    const float ang = static_cast<float>(p) * (long_row ? t.inv_long[j] : t.inv[j]);
    float sv, cv;
    sincosf(ang, &sv, &cv);  // one range reduction for both
    c = cv * t.attn;
    s = sv * t.attn;
}

// Where pair j of a head row sits: (j, j + half) for neox, else (2j, 2j + 1).
__device__ __forceinline__ void rope_indices(const RopeTable& t, int j, int& ia, int& ib) {
    ia = t.neox ? j : 2 * j;
    ib = t.neox ? j + t.half : 2 * j + 1;
}

// Pair j of one head row v (f32, in place), turned by (c, s): k_rope's arithmetic.
__device__ __forceinline__ void rope_pair(const RopeTable& t, float* v, int j, float c, float s) {
    int ia, ib;
    rope_indices(t, j, ia, ib);
    const float va = v[ia], vb = v[ib];
    v[ia] = rope_first(va, vb, c, s);
    v[ib] = rope_second(va, vb, c, s);
}

// What k_merge needs to write q and k back turned after rope_attention's split kernel.
struct RopeBack {
    float* q;
    float* k;
    RopeTable t;
};

}  // namespace gpu
