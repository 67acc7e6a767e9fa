// k_attention.cu: paged, causal, varlen GQA attention (docs/OPS.md `attention`).
//
// The step's k and v rows are written into their cache slots (by k_attend itself when every
// sequence brings one row, as in decode; by a launch of their own otherwise), and every query row
// attends over its sequence's cache. The attention kernel is flash-decoding shaped: a block
// serves one row and one kv head (with up to kMaxGroup query heads that share it), its warps take
// positions in turn with an online softmax, and the context is cut into `splits` chunks whose
// partial results a second kernel merges. The split count depends only on the row count and the
// block-table width (the engine's: the step's longest context rounded up), never on this step's
// lengths, so a decode step recorded as a graph replays correctly at any context that width holds.
//
// An fp8 cache (codes of e4m3, uint8_t here, with a scale a token and kv head in operands 9 and
// 10: k_kv_fp8.h) is written by a launch of its own (a warp a head finds the head's largest
// magnitude first) and read by the walk kernel below, each value its code times its scale; the
// tensor-core kernels read bf16 caches only, so with fp8 every row, a prompt's too, takes the walk.
#include <algorithm>
#include <cfloat>
#include <cstdlib>
#include <type_traits>

#include <radiance/kernels/rad_compose.h>

#include "k_common.h"
#include "k_kv_fp8.h"
#include "k_paged.h"
#include "k_phase.h"
#include "k_rope.h"

namespace gpu {

namespace {

constexpr int kWarps = 4;
constexpr int kMaxGroup = 8;  // query heads a block serves for one kv head
constexpr int kMaxSplits = 32;

template <typename C>
__device__ __forceinline__ C from_f32(float v);
template <>
__device__ __forceinline__ float from_f32<float>(float v) {
    return v;
}
template <>
__device__ __forceinline__ gpu_bf16 from_f32<gpu_bf16>(float v) {
    return gpu_f32_to_bf16(v);
}

// The cache row (block * block size + offset) where step row i's k and v go.
__device__ __forceinline__ int64_t cache_row_of(int64_t i, const int32_t* pos, const int32_t* cu, const int32_t* bt, const AttnGeom& g) {
    const int lo = seq_of_row(cu, g.n_seq, i);
    const int p = pos[i];
    return static_cast<int64_t>(bt[static_cast<int64_t>(lo) * g.bt_stride + p / g.block]) * g.block + p % g.block;
}

// A cache of fp8 codes (k_kv_fp8.h), read through a scale a token and kv head.
template <typename C>
constexpr bool kFp8Cache = std::is_same<C, uint8_t>::value;

// The step's k and v rows into an fp8 cache: a warp per (row, kv head) finds the head's scale,
// then stores its codes; the scale goes to the head's slot of ks / vs ([blocks, block, n_head_kv]).
__global__ void k_write_kv_fp8(const float* k, const float* v, uint8_t* kc, uint8_t* vc, float* ks, float* vs, const int32_t* pos,
                               const int32_t* cu, const int32_t* bt, AttnGeom g) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.x;
    const int64_t srow = cache_row_of(i, pos, cu, bt, g) * g.n_head_kv;  // the slot's first scale
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, warps = blockDim.x / kWarpSize;
    for (int h = warp; h < g.n_head_kv; h += warps) {
        const float* kr = k + i * g.k_pitch + static_cast<int64_t>(h) * g.head_dim;
        const float* vr = v + i * g.v_pitch + static_cast<int64_t>(h) * g.head_dim;
        float ka = 0.0f, va = 0.0f;
        for (int d = lane; d < g.head_dim; d += kWarpSize) {
            ka = fmaxf(ka, kv_fp8_magnitude(kr[d]));
            va = fmaxf(va, kv_fp8_magnitude(vr[d]));
        }
        const float sk = kv_fp8_scale(ka), sv = kv_fp8_scale(va);
        const int64_t slot = (srow + h) * g.head_dim;
        for (int d = lane; d < g.head_dim; d += kWarpSize) {
            kc[slot + d] = kv_fp8_code(__fdiv_rn(kr[d], sk));
            vc[slot + d] = kv_fp8_code(__fdiv_rn(vr[d], sv));
        }
        if (lane == 0) {
            ks[srow + h] = sk;
            vs[srow + h] = sv;
        }
    }
}

template <typename C>
__global__ void k_write_kv(const float* k, const float* v, C* kc, C* vc, const int32_t* pos, const int32_t* cu, const int32_t* bt,
                           AttnGeom g) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.x;
    const int64_t slot = cache_row_of(i, pos, cu, bt, g) * g.n_head_kv * g.head_dim;
    const int w = g.n_head_kv * g.head_dim;
    for (int t = threadIdx.x; t < w; t += blockDim.x) {
        kc[slot + t] = from_f32<C>(k[i * g.k_pitch + t]);
        vc[slot + t] = from_f32<C>(v[i * g.v_pitch + t]);
    }
}

// VPL consecutive values of a cached k or v row from dim lane * VPL: one vector load when the row
// is exactly 32 * VPL wide (8 or 16 bytes a lane), element loads otherwise.
template <typename C, int VPL>
__device__ __forceinline__ void load_row(const C* row, int lane, int hd, float* out) {
    const int d0 = lane * VPL;
    if constexpr (sizeof(C) == 2 && (VPL == 4 || VPL == 8)) {
        if (hd == 32 * VPL) {
            using V = typename std::conditional<VPL == 4, uint2, uint4>::type;
            const V raw = *reinterpret_cast<const V*>(row + d0);
            const C* h = reinterpret_cast<const C*>(&raw);
#pragma unroll
            for (int v = 0; v < VPL; ++v) out[v] = gpu_to_f32(h[v]);
            return;
        }
    }
    if constexpr (sizeof(C) == 4 && VPL == 4) {
        if (hd == 128) {
            const float4 t = *reinterpret_cast<const float4*>(row + d0);
            out[0] = t.x, out[1] = t.y, out[2] = t.z, out[3] = t.w;
            return;
        }
    }
#pragma unroll
    for (int v = 0; v < VPL; ++v) out[v] = d0 + v < hd ? gpu_to_f32(row[d0 + v]) : 0.0f;
}

// load_row for an fp8 cache: each code times the row's scale.
template <int VPL>
__device__ __forceinline__ void load_row_fp8(const uint8_t* row, float scale, int lane, int hd, float* out) {
    const int d0 = lane * VPL;
    if constexpr (VPL == 4 || VPL == 8) {
        if (hd == 32 * VPL) {
            uint32_t w[VPL / 4];
            if constexpr (VPL == 4) {
                w[0] = *reinterpret_cast<const uint32_t*>(row + d0);
            } else {
                const uint2 t = *reinterpret_cast<const uint2*>(row + d0);
                w[0] = t.x, w[1] = t.y;
            }
#pragma unroll
            for (int v = 0; v < VPL; ++v) out[v] = kv_fp8_load((w[v / 4] >> (8 * (v % 4))) & 0xffu, scale);
            return;
        }
    }
#pragma unroll
    for (int v = 0; v < VPL; ++v) out[v] = d0 + v < hd ? kv_fp8_load(row[d0 + v], scale) : 0.0f;
}

// VPL: values of a head each lane holds (consecutive dims lane * VPL ..) (head_dim <= 32 * VPL); G: query heads per block (the
// GQA group, or kMaxGroup when the group is larger or not a power of two).
//
// own_row (decode: one row per sequence): no block reads the row's own cache slot, which is
// taken from the k and v inputs instead, and the first block of each kv head stores it, so the
// store needs no launch of its own.
template <typename C, int VPL, int G>
__global__ void __launch_bounds__(kWarps * 32)
    k_attend(const float* q, const float* kin, const float* vin, C* kc, C* vc, const float* ks, const float* vs, const int32_t* pos,
             const int32_t* cu, const int32_t* bt, float* y, float* part, AttnGeom g) {
    // Until gpu_grid_wait this block reads only what no kernel of the step writes: the step's
    // positions, sequences and block tables, and in decode (own_row) the cache rows of earlier
    // positions, whose first load so overlaps the previous kernel's drain.
    const int64_t i = blockIdx.x;
    const int kvh = blockIdx.y / g.group_chunks, chunk = blockIdx.y % g.group_chunks, z = blockIdx.z;
    const int group = g.n_head / g.n_head_kv;
    const int h0 = kvh * group + chunk * G;
    const int nh = min(G, group - chunk * G);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int lo = seq_of_row(cu, g.n_seq, i);
    if (g.single_only && cu[lo + 1] - cu[lo] != 1) return;  // the whole block: before any barrier
    const int32_t* table = bt + static_cast<int64_t>(lo) * g.bt_stride;
    const int p = pos[i];
    int j0, j1;
    split_range(g, p, z, j0, j1);
    const int64_t head_off = static_cast<int64_t>(kvh) * g.head_dim;
    const float* kown = kin + i * g.k_pitch + head_off;
    const float* vown = vin + i * g.v_pitch + head_off;
    // Position j's k and v rows; the own row as the cache will hold it (narrowed), so both paths
    // see the same bytes.
    auto fetch = [&](int j, float* kr, float* vr) {
        if constexpr (kFp8Cache<C>) {  // (never own_row: k_write_kv_fp8 stored the step's rows)
            const int64_t srow = paged_row(table, j, g.block, -1) * g.n_head_kv + kvh;
            load_row_fp8<VPL>(kc + srow * g.head_dim, ks[srow], lane, g.head_dim, kr);
            load_row_fp8<VPL>(vc + srow * g.head_dim, vs[srow], lane, g.head_dim, vr);
        } else if (g.own_row && j == p) {
#pragma unroll
            for (int v = 0; v < VPL; ++v) {
                const int d = lane * VPL + v;
                kr[v] = d < g.head_dim ? gpu_to_f32(from_f32<C>(kown[d])) : 0.0f;
                vr[v] = d < g.head_dim ? gpu_to_f32(from_f32<C>(vown[d])) : 0.0f;
            }
        } else {
            const int64_t slot = paged_row(table, j, g.block, -1) * g.n_head_kv * g.head_dim + head_off;
            load_row<C, VPL>(kc + slot, lane, g.head_dim, kr);
            load_row<C, VPL>(vc + slot, lane, g.head_dim, vr);
        }
    };
    // One position ahead in flight: the next rows load while this one is scored.
    float kv[VPL], vv[VPL];
    const bool early = g.own_row && j0 + warp < j1 && j0 + warp != p;
    if (early) fetch(j0 + warp, kv, vv);
    gpu_grid_wait();
    gpu_grid_release();
    if (!early && j0 + warp < j1) fetch(j0 + warp, kv, vv);
    if constexpr (!kFp8Cache<C>) {
        if (g.own_row && chunk == 0 && z == 0 && warp == 0) {
            const int64_t slot = (static_cast<int64_t>(table[p / g.block]) * g.block + p % g.block) * g.n_head_kv * g.head_dim + head_off;
            for (int d = lane; d < g.head_dim; d += 32) {
                kc[slot + d] = from_f32<C>(kown[d]);
                vc[slot + d] = from_f32<C>(vown[d]);
            }
        }
    }

    float qv[G][VPL], acc[G][VPL], m[G], l[G];
#pragma unroll
    for (int h = 0; h < G; ++h) {
        m[h] = -FLT_MAX;
        l[h] = 0.0f;
#pragma unroll
        for (int v = 0; v < VPL; ++v) {
            const int d = lane * VPL + v;
            qv[h][v] = (h < nh && d < g.head_dim) ? q[i * g.q_pitch + static_cast<int64_t>(h0 + h) * g.head_dim + d] : 0.0f;
            acc[h][v] = 0.0f;
        }
    }
    for (int j = j0 + warp; j < j1; j += kWarps) {
        float kn[VPL], vn[VPL];
        if (j + kWarps < j1) fetch(j + kWarps, kn, vn);
        // Every head's dot product first, then one butterfly for all of them: G
        // independent shuffle chains in flight instead of one at a time.
        float sc[G];
#pragma unroll
        for (int h = 0; h < G; ++h) {
            float s = 0.0f;
#pragma unroll
            for (int v = 0; v < VPL; ++v) s += qv[h][v] * kv[v];
            sc[h] = s;
        }
#pragma unroll
        for (int sh = 16; sh > 0; sh >>= 1)
#pragma unroll
            for (int h = 0; h < G; ++h) sc[h] += gpu_shfl_xor(sc[h], sh);
#pragma unroll
        for (int h = 0; h < G; ++h) {
            if (h < nh) {
                float s = sc[h] * g.scale;
                if (g.softcap > 0.0f) s = g.softcap * tanhf(s / g.softcap);
                const float mn = fmaxf(m[h], s);
                const float corr = __expf(m[h] - mn), e = __expf(s - mn);
                l[h] = l[h] * corr + e;
#pragma unroll
                for (int v = 0; v < VPL; ++v) acc[h][v] = acc[h][v] * corr + e * vv[v];
                m[h] = mn;
            }
        }
#pragma unroll
        for (int v = 0; v < VPL; ++v) {
            kv[v] = kn[v];
            vv[v] = vn[v];
        }
    }
    // Merge the warps: each writes its state, then warp w merges head w..
    __shared__ float sm[kWarps][G], sl[kWarps][G];
    __shared__ float sacc[kWarps][G][32 * VPL];
#pragma unroll
    for (int h = 0; h < G; ++h) {
        if (lane == 0) {
            sm[warp][h] = m[h];
            sl[warp][h] = l[h];
        }
#pragma unroll
        for (int v = 0; v < VPL; ++v) sacc[warp][h][lane * VPL + v] = acc[h][v];
    }
    __syncthreads();
    for (int h = warp; h < nh; h += kWarps) {
        float M = -FLT_MAX;
        for (int w = 0; w < kWarps; ++w) M = fmaxf(M, sm[w][h]);
        float L = 0.0f;
        for (int w = 0; w < kWarps; ++w) L += sl[w][h] * __expf(sm[w][h] - M);
        for (int d = lane; d < g.head_dim; d += 32) {
            float a = 0.0f;
            for (int w = 0; w < kWarps; ++w) a += sacc[w][h][d] * __expf(sm[w][h] - M);
            if (g.splits == 1) {
                y[i * g.y_pitch + static_cast<int64_t>(h0 + h) * g.head_dim + d] = L > 0.0f ? a / L : 0.0f;
            } else {  // partial: [row][head][split] of (m, l, acc[head_dim])
                float* pp = part + ((i * g.n_head + h0 + h) * g.splits + z) * (g.head_dim + 2);
                pp[2 + d] = a;
                if (d == lane && lane == 0) {
                    pp[0] = M;
                    pp[1] = L;
                }
            }
        }
    }
}

// WIDE (head_dim <= the block's 128 threads): each thread issues its dimension's loads of every
// split at once, right after the wait and beside the (max, sum) loads, so the partials cost one
// round trip to L2 instead of one per 8 splits (a plan for 4,096-token prompts has 32 splits at
// batch 1: the merge was 2 us a layer slower there than at the 12 of a small plan,
// device_run.sh trace). The sum runs over z in the same order either way: the same bytes.
// Taken where a thread would otherwise sum in more than one round of 8 splits (launch_merge).
//
// ROPE (rope_attention with several splits): the attention kernel's splits all read q and the
// own k unturned, so the block of (row, head h) writes q's head h back turned, and k's head h
// where there is one, once every split is done (the chain leaves them turned in place). Their
// unturned values and angles are read before gpu_grid_wait: q and k are the qkv gemm's, whose
// grid the attention's wait saw complete before this kernel could launch, and no split writes
// them while it has company (read from L2, past any stale L1 line of an earlier layer).
//
// Before the wait a block reads only the step's inputs (positions, sequences), so after it the
// partials' loads are the first round trip; the turned q and k are stored after y, off the
// path to the output projection's inputs (they were two round trips before the partials: batch-1
// decode 246.1 -> 248.1 tok/s on the 8B shape, H200, 2026-12-03, two rounds). The next kernel
// (the output projection, whose first wave sends all its weight loads as soon as it is resident)
// may launch once the partials are in, so that burst does not hold up their loads: 248.1 ->
// 248.5 against releasing it right after the wait (phase stamps: the merge ends 2.6 us sooner);
// releasing it at the end was slower.
template <bool WIDE, bool ROPE>
__global__ void k_merge(const float* part, float* y, const int32_t* cu, const int32_t* pos, AttnGeom g, RopeBack rb) {
    const int64_t i = blockIdx.x;
    const int h = blockIdx.y;
    RAD_PHASE(g.ph, 4, 0);
    // One live split (g.live_keys): the attention kernel wrote y, and with ROPE q and k, itself.
    const int32_t p = pos[i];
    const int live = live_splits(g, p);
    if (live == 1) return;
    if (g.single_only) {  // k_attend wrote no partials for the flash kernel's rows
        const int s = seq_of_row(cu, g.n_seq, i);
        if (cu[s + 1] - cu[s] != 1) return;
    }
    // ROPE: this thread's pair j of q's head h and k's head h, unturned, and its angle.
    const int j = threadIdx.x;
    const bool turn_q = ROPE && j < rb.t.half, turn_k = turn_q && h < g.n_head_kv;
    float* qr = ROPE ? rb.q + i * g.q_pitch + static_cast<int64_t>(h) * g.head_dim : nullptr;
    float* kr = ROPE ? rb.k + i * g.k_pitch + static_cast<int64_t>(h) * g.head_dim : nullptr;
    int ia, ib;
    rope_indices(rb.t, j, ia, ib);
    float qa = 0.0f, qb = 0.0f, ka = 0.0f, kb = 0.0f, c = 0.0f, sn = 0.0f;
    if constexpr (ROPE) {
        if (turn_q) {
            qa = gpu_load_l2(qr + ia);
            qb = gpu_load_l2(qr + ib);
            if (turn_k) {
                ka = gpu_load_l2(kr + ia);
                kb = gpu_load_l2(kr + ib);
            }
            rope_angle(rb.t, p, j, c, sn);
        }
    }
    gpu_grid_wait();
    RAD_PHASE(g.ph, 4, 1);
    const int64_t stride = g.head_dim + 2;
    const float* pp = part + (i * g.n_head + h) * g.splits * stride;
    float v[WIDE ? kMaxSplits : 1];
    if constexpr (WIDE) {
        const int d = threadIdx.x < g.head_dim ? threadIdx.x : 0;
#pragma unroll
        for (int z = 0; z < kMaxSplits; ++z) v[z] = z < live ? pp[z * stride + 2 + d] : 0.0f;
    }
    // Every split's (max, sum) at once into shared memory, then each split's weight: the loads of
    // one loop over splits after another were a chain of dependent round trips (~6 us a launch).
    __shared__ float wz[kMaxSplits], mz[kMaxSplits], lz[kMaxSplits];
    for (int z = threadIdx.x; z < live; z += blockDim.x) {
        mz[z] = pp[z * stride];
        lz[z] = pp[z * stride + 1];
    }
    __syncthreads();
    gpu_grid_release();  // the partials are in
    RAD_PHASE(g.ph, 4, 2);
    float M = -FLT_MAX;
    for (int z = 0; z < live; ++z) M = fmaxf(M, mz[z]);
    for (int z = threadIdx.x; z < live; z += blockDim.x) wz[z] = __expf(mz[z] - M);
    __syncthreads();
    float L = 0.0f;
    for (int z = 0; z < live; ++z) L += lz[z] * wz[z];
    if constexpr (WIDE) {
        if (threadIdx.x < g.head_dim) {
            float a = 0.0f;
#pragma unroll
            for (int z = 0; z < kMaxSplits; ++z)
                if (z < live) a += v[z] * wz[z];
            y[i * g.y_pitch + static_cast<int64_t>(h) * g.head_dim + threadIdx.x] = L > 0.0f ? a / L : 0.0f;
        }
    } else {
        for (int d = threadIdx.x; d < g.head_dim; d += blockDim.x) {
            float a = 0.0f;
#pragma unroll 8
            for (int z = 0; z < live; ++z) a += pp[z * stride + 2 + d] * wz[z];
            y[i * g.y_pitch + static_cast<int64_t>(h) * g.head_dim + d] = L > 0.0f ? a / L : 0.0f;
        }
    }
    if constexpr (ROPE) {
        if (turn_q) {
            qr[ia] = rope_first(qa, qb, c, sn);
            qr[ib] = rope_second(qa, qb, c, sn);
            if (turn_k) {
                kr[ia] = rope_first(ka, kb, c, sn);
                kr[ib] = rope_second(ka, kb, c, sn);
            }
        }
    }
    RAD_PHASE(g.ph, 4, 3);
}

// k_merge for these partials, WIDE (every split's loads at once) where head_dim fits the block and
// there are more than 8 splits: batch-1 decode 233.1 -> 238.9 tok/s with the 32 splits of a plan
// for 4,096-token prompts, 237.0 -> 238.1 with the 12 of a small plan, but at 64 rows (2 splits)
// 9,834 -> 9,678 (H200, 2026-12-03, two rounds each).
// With `rb`, q and k are written back turned (rope_attention).
void launch_merge(const float* part, float* y, const int32_t* cu, const int32_t* pos, const AttnGeom& g, int64_t n, gpuStream_t s,
                  const RopeBack* rb = nullptr) {
    const bool wide = g.splits > 8 && g.head_dim <= 128;
    const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(g.n_head));
    const RopeBack none{};
    AttnGeom gm = g;
#ifdef RAD_GPU_PHASES
    gm.ph = phase_slots(kPhaseMerge, static_cast<int64_t>(grid.x) * grid.y, 4, s);
#endif
    if (rb) {
        if (wide)
            gpu_launch(k_merge<true, true>, grid, 128, 0, s, part, y, cu, pos, gm, *rb);
        else
            gpu_launch(k_merge<false, true>, grid, 128, 0, s, part, y, cu, pos, gm, *rb);
    } else {
        if (wide)
            gpu_launch(k_merge<true, false>, grid, 128, 0, s, part, y, cu, pos, gm, none);
        else
            gpu_launch(k_merge<false, false>, grid, 128, 0, s, part, y, cu, pos, gm, none);
    }
}

// Splits for n rows over contexts up to max_ctx: enough blocks to fill the card (about four per
// multiprocessor) counting the rows and kv-head blocks already there, so one decode row splits its
// context many ways and a batch of rows none (every split costs a partial write and a merge), and
// never fewer than 16 positions a split.
int splits_for(int64_t n, int64_t head_blocks, int64_t max_ctx) {
    const int64_t want = 4 * static_cast<int64_t>(sm_count() > 0 ? sm_count() : 132);
    const int64_t have = (n > 0 ? n : 1) * (head_blocks > 0 ? head_blocks : 1);
    int64_t s = (want + have - 1) / have;
    s = s < 1 ? 1 : s > kMaxSplits ? kMaxSplits : s;
    const int64_t by_ctx = (max_ctx + 15) / 16;
    return static_cast<int>(s < by_ctx ? s : (by_ctx < 1 ? 1 : by_ctx));
}

// rope_attention's decode steps: every row its sequence's only one, a bf16 cache and the
// tensor-core kernel; RAD_E_UNSUPPORTED (nothing launched) otherwise, for the caller's chain.
template <typename C>
int run_rope(const RadArgs* a, AttnGeom g, int64_t n, const RopeTable& t) {
    if constexpr (!std::is_same<C, gpu_bf16>::value) return RAD_E_UNSUPPORTED;
    if (n != g.n_seq) return RAD_E_UNSUPPORTED;
    g.own_row = 1;
    auto* part = static_cast<float*>(a->scratch);
    const int rc = attention_decode_tc(a, g, n, part, &t);
    if (rc != RAD_OK || g.splits == 1) return rc;
    const RopeBack rb{static_cast<float*>(a->t[0].data), static_cast<float*>(a->t[1].data), t};
    launch_merge(part, static_cast<float*>(a->t[8].data), static_cast<const int32_t*>(a->t[6].data),
                 static_cast<const int32_t*>(a->t[5].data), g, n, stream_of(a), &rb);
    return launched();
}

template <typename C>
int run(const RadArgs* a, AttnGeom g, int64_t n) {
    const RadTensor *q = rad_arg_in(a, 0), *k = rad_arg_in(a, 1), *v = rad_arg_in(a, 2);
    RadTensor *kc = rad_arg_out(a, 3), *vc = rad_arg_out(a, 4);
    const RadTensor *pos = rad_arg_in(a, 5), *cu = rad_arg_in(a, 6), *bt = rad_arg_in(a, 7);
    RadTensor* y = rad_arg_out(a, 8);
    const auto* pp = static_cast<const int32_t*>(pos->data);
    const auto* cp = static_cast<const int32_t*>(cu->data);
    const auto* bp = static_cast<const int32_t*>(bt->data);
    gpuStream_t s = stream_of(a);
    // Every sequence one row (decode): the attention kernel stores the step's k/v itself, no launch
    // of its own (a launch of its own measured within noise of it, 192.6 against 194.6 tok/s at
    // batch 1, H200, 2026-12-01; the decode kernels' early cache loads build on it since).
    g.own_row = n == g.n_seq && !kFp8Cache<C> ? 1 : 0;
    float *ksp = nullptr, *vsp = nullptr;  // an fp8 cache's scales (attend checked them)
    if constexpr (kFp8Cache<C>) {
        ksp = static_cast<float*>(a->t[9].data);
        vsp = static_cast<float*>(a->t[10].data);
        gpu_launch(k_write_kv_fp8, static_cast<unsigned>(n), 128, 0, s, static_cast<const float*>(k->data), static_cast<const float*>(v->data),
                   static_cast<uint8_t*>(kc->data), static_cast<uint8_t*>(vc->data), ksp, vsp, pp, cp, bp, g);
    } else if (!g.own_row) {
        gpu_launch(k_write_kv<C>, static_cast<unsigned>(n), 256, 0, s, static_cast<const float*>(k->data),
                   static_cast<const float*>(v->data), static_cast<C*>(kc->data), static_cast<C*>(vc->data), pp, cp, bp, g);
    }
    if (n > g.n_seq) {  // some sequence brings several rows: the tensor-core path when this build has one
        // In a server's mixed step the flash kernel can take the sequences with several rows and
        // the decode kernel below the ones with one row: a 128-row tile per decode row and query
        // head cost ~1 ms a layer at 256 decode rows (rad-enginebench --mixed, H200), the decode
        // kernel ~40 us (256 decode rows + a 64-row chunk: 60.4 -> 31.1 ms a step on an H200).
        const int multi_only = g.n_seq > 1 ? 1 : 0;
        FlashGeom fg{g.n_head, g.n_head_kv, g.block, g.n_seq, g.bt_stride, g.window, g.scale, g.softcap, g.q_pitch, g.y_pitch, multi_only};
        const int rc = attention_flash(a, fg, n, g.head_dim);
        if (rc != RAD_E_UNSUPPORTED && (rc != RAD_OK || !multi_only)) return rc;
        if (rc == RAD_OK) g.single_only = 1;
    }
    auto* part = static_cast<float*>(a->scratch);
    if constexpr (std::is_same<C, gpu_bf16>::value) {
        // Decode rows on the tensor cores where that kernel has a path (k_attend below otherwise):
        // 64 / 256 rows at 1k context 3,763 / 5,826 -> 7,014 / 11,747 tok/s against k_attend
        // (8B shape, H200, 2026-12-01)
        const int rc = attention_decode_tc(a, g, n, part);
        if (rc != RAD_E_UNSUPPORTED) {
            if (rc == RAD_OK && g.splits > 1) {
                launch_merge(part, static_cast<float*>(y->data), cp, pp, g, n, s);
                return launched();
            }
            return rc;
        }
    }
    dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(g.n_head_kv * g.group_chunks), static_cast<unsigned>(g.splits));
    const auto* qp = static_cast<const float*>(q->data);
    auto* yp = static_cast<float*>(y->data);
    C *kcp = static_cast<C*>(kc->data), *vcp = static_cast<C*>(vc->data);
    const auto *kin = static_cast<const float*>(k->data), *vin = static_cast<const float*>(v->data);
    const int vpl = (g.head_dim + 31) / 32;
    auto go = [&](auto vpl_c, auto g_c) {
        gpu_launch(k_attend<C, decltype(vpl_c)::value, decltype(g_c)::value>, grid, kWarps * 32, 0, s, qp, kin, vin, kcp, vcp,
                   static_cast<const float*>(ksp), static_cast<const float*>(vsp), pp, cp, bp, yp, part, g);
        return RAD_OK;
    };
    auto by_group = [&](auto vpl_c) {
        switch (g.group) {
        case 1: return go(vpl_c, std::integral_constant<int, 1>{});
        case 2: return go(vpl_c, std::integral_constant<int, 2>{});
        case 4: return go(vpl_c, std::integral_constant<int, 4>{});
        default: return go(vpl_c, std::integral_constant<int, kMaxGroup>{});
        }
    };
    switch (vpl) {
    case 1: by_group(std::integral_constant<int, 1>{}); break;
    case 2: by_group(std::integral_constant<int, 2>{}); break;
    case 3: by_group(std::integral_constant<int, 3>{}); break;
    case 4: by_group(std::integral_constant<int, 4>{}); break;
    case 5:
    case 6:
    case 7:
    case 8: by_group(std::integral_constant<int, 8>{}); break;
    default: return RAD_E_SHAPE;
    }
    if (g.splits > 1) launch_merge(part, yp, cp, pp, g, n, s);
    return launched();
}

}  // namespace

uint64_t attention_scratch(const RadArgs* geom) {
    const int64_t n = rad_args_geti(geom, "n"), heads = rad_args_geti(geom, "n_head"), hd = rad_args_geti(geom, "head_dim");
    // splits > 1 only while n * kv-head blocks < 4 * SMs, so n * splits < max(n, 8 * SMs) <= max(n, 4096)
    // for any card up to 512 SMs (splits_for): this bounds every launch.
    const int64_t rows = n > 4096 ? n : 4096;
    return static_cast<uint64_t>(rows * heads * (hd + 2)) * 4;
}

namespace {

// attention, or with `rope` rope_attention's fused decode form (RAD_E_UNSUPPORTED where there is none).
int attend(const RadArgs* a, const RopeTable* rope) {
    for (int i = 0; i < 9; ++i)
        if (!a->t[i].data) return RAD_E_ARG;
    const RadTensor *q = &a->t[0], *kc = &a->t[3], *cu = &a->t[6], *bt = &a->t[7];
    if (q->dtype != RAD_F32 || a->t[1].dtype != RAD_F32 || a->t[2].dtype != RAD_F32 || a->t[8].dtype != RAD_F32) return RAD_E_DTYPE;
    AttnGeom g{};
    const int64_t n = rad_args_geti(a, "n");
    g.n_head = static_cast<int>(rad_args_geti(a, "n_head"));
    g.n_head_kv = static_cast<int>(rad_args_geti(a, "n_head_kv"));
    g.head_dim = static_cast<int>(rad_args_geti(a, "head_dim"));
    g.block = static_cast<int>(rad_args_geti(a, "block"));
    g.window = static_cast<int>(rad_args_geti_or(a, "window", 0));
    g.scale = static_cast<float>(rad_args_getf(a, "scale"));
    g.softcap = static_cast<float>(rad_args_getf_or(a, "softcap", 0.0));
    if (g.n_head_kv <= 0 || g.n_head % g.n_head_kv || g.head_dim > 256 || g.block <= 0 || kc->rank != 4 || kc->shape[1] != g.block)
        return RAD_E_SHAPE;
    g.n_seq = static_cast<int>(cu->shape[0] - 1);
    g.bt_stride = static_cast<int>(bt->rank > 1 ? bt->shape[1] : bt->shape[0]);
    const int group = g.n_head / g.n_head_kv;
    // Heads per block: the whole group when it is 1, 2 or 4, else chunks of kMaxGroup.
    g.group = group == 1 || group == 2 || group == 4 ? group : kMaxGroup;
    g.group_chunks = (group + g.group - 1) / g.group;
    g.splits = splits_for(n, static_cast<int64_t>(g.n_head_kv) * g.group_chunks, static_cast<int64_t>(g.bt_stride) * g.block);
    // RADIANCE_GPU_ATTN_MIN_SPLITS=N raises the split count (an A/B switch still under measurement:
    // 4 splits at 64 rows beat the default 2 on the walk kernel, 8,600 against 8,199 tok/s, H200,
    // 2026-12-01; not measured on the tensor-core decode kernel since; docs/SETTINGS.md)
    static const int min_splits = env_int("RADIANCE_GPU_ATTN_MIN_SPLITS");
    if (min_splits > g.splits) g.splits = std::min(min_splits, kMaxSplits);
    if (static_cast<uint64_t>(n * g.splits * g.n_head * (g.head_dim + 2)) * 4 > a->scratch_bytes && g.splits > 1) return RAD_E_NOMEM;
    g.q_pitch = pitch_elems(q);
    g.k_pitch = pitch_elems(&a->t[1]);
    g.v_pitch = pitch_elems(&a->t[2]);
    g.y_pitch = pitch_elems(&a->t[8]);
    if (kc->dtype != a->t[4].dtype) return RAD_E_DTYPE;
    if (rope) return kc->dtype == RAD_BF16 ? run_rope<gpu_bf16>(a, g, n, *rope) : RAD_E_UNSUPPORTED;
    if (kc->dtype == RAD_BF16) return run<gpu_bf16>(a, g, n);
    if (kc->dtype == RAD_F32) return run<float>(a, g, n);
    if (kc->dtype == RAD_FP8_E4M3) {  // with its scales, f32 (operands 9 and 10)
        const RadTensor *ks = rad_arg_in(a, 9), *vs = rad_arg_in(a, 10);
        if (!ks || !vs || !ks->data || !vs->data || ks->dtype != RAD_F32 || vs->dtype != RAD_F32) return RAD_E_ARG;
        return run<uint8_t>(a, g, n);
    }
    return RAD_E_DTYPE;
}

}  // namespace

int attention(const RadArgs* a) { return attend(a, nullptr); }

// Decode steps through the fused kernel where it applies (batch-1 decode on the 8B shape, H200,
// 2026-12-03: 238.0 -> 239.6 tok/s against rope as a launch of its own, three rounds); everything
// else through the chain of libgpu's own rows.
int rope_attention(const RadArgs* a) {
    const int64_t hd = rad_args_geti(a, "head_dim"), rot = rad_args_geti(a, "rot_dim");
    RopeTable t;
    if (rot == hd && rope_table(a, rot, &t) && t.long_from < 0) {  // (longrope: the chain)
        const int rc = attend(a, &t);
        if (rc != RAD_E_UNSUPPORTED) return rc;
    }
    return rad_compose_rope_attention(a, rope, attention);
}

}  // namespace gpu
