// k_attention_decode.cu: decode rows' attention on the tensor cores (CUDA, sm_80 and later).
//
// k_attend (k_attention.cu) walks positions one per warp, a 32-lane dot product and butterfly
// for each: ~120 instructions a position, which at 64 rows x 1k context ran at ~0.9 TB/s of
// cache reads (rad-enginebench on an H200: 16.9 ms a step against 7.6 at 128 context). Here a
// block serves the same (row, kv head, split) but the GQA group's query heads are the rows of an
// m16n8k16 tile (rows past the group are zero): key and value tiles of 64 positions come from the
// paged cache into shared memory by cp.async, two buffers each; each of the W warps takes 16 keys
// of a tile, S = Q K^T in 16 mma, an online softmax over its keys (exp2 units), O += P V in 16
// mma. The warps' states merge through shared memory at the end, into y (one live split) or into
// the partials k_merge combines, in k_attend's layout (the max in natural-log units).
//
// A split's first two tiles load at once (both buffers are free then), so a split of up to two
// tiles costs one round trip to memory. For a few rows (batch-1 decode) the block has 8 warps
// (128-key tiles) and the splits go live only as the context needs them, 256 keys each
// (AttnGeom::live_keys): a context of up to 256 keys is one block a kv head that writes y
// itself, and with block tables that narrow no k_merge is launched. That was level with the
// 4-warp form and its merge at batch 1 and 128-256 positions (8B shape, H200, 2026-12-03: 245.6 /
// 246.1 against 245.4 / 246.0 tok/s; the timeline puts the one block at 16.3 us exposed a layer
// against 10.4 for 12 splits plus 6.3 for k_merge: 8 blocks each reading the whole context),
// slower where the 4-warp blocks all fit on the card at once and faster where they do not
// (attention_decode_tc's choice). (Letting the next kernel launch only once the keys were in was
// level too.)
//
// In decode (own_row) the row's own k and v come from the step's inputs, narrowed as the cache
// holds them, and split 0 stores them; the first tiles of earlier positions load before
// gpu_grid_wait (no kernel of the step writes them).
#include <algorithm>
#include <cfloat>

#include "k_mma.h"
#include "k_paged.h"
#include "k_phase.h"
#include "k_rope.h"

namespace gpu {

#if RAD_GPU_CUDA
namespace {
using namespace mma;

constexpr int kQRows = 16;  // query heads of one kv head an mma tile holds
template <int W>
constexpr int tile_keys() {
    return W * 16;
}  // keys a tile, 16 a warp

// Dynamic shared memory: the Q tile, two K and two V tiles; the warps' final states (16 rows x D
// floats each, then their maxima and sums) reuse the tiles. ROPE adds the own k row turned and
// the own v row, in f32, after the tiles.
template <int D, int W>
constexpr size_t dec_tiles_bytes() {
    return static_cast<size_t>(kQRows + 4 * tile_keys<W>()) * (D + 8) * sizeof(gpu_bf16);
}
template <int D, int W, bool ROPE>
constexpr size_t dec_smem_bytes() {
    return dec_tiles_bytes<D, W>() + (ROPE ? 2 * D * sizeof(float) : 0);
}
static_assert(4 * kQRows * (128 + 2) * sizeof(float) <= 4 * tile_keys<4>() * (128 + 8) * sizeof(gpu_bf16),
              "the warps' states fit in the tile buffers (W warps' states, W * 16-key tiles)");

// ROPE (rope_attention, decode only: rot_dim = D): q and the own k arrive unturned; the block
// turns its group's q heads and its own k with k_rope.h's arithmetic as it loads them, and with
// one split (no other block reads those heads) writes them back turned; k_merge does that
// otherwise.
constexpr int kAttnPhases = 4 + kPhasePasses;  // the measuring build's stamps a block (k_phase.h)

template <int D, int W, bool ROPE>
__global__ void __launch_bounds__(W * 32)
    k_attend_tc(float* q, float* kin, const float* __restrict__ vin, gpu_bf16* __restrict__ kc, gpu_bf16* __restrict__ vc,
                const int32_t* __restrict__ pos, const int32_t* __restrict__ cu, const int32_t* __restrict__ bt, float* __restrict__ y,
                float* __restrict__ part, AttnGeom g, int block_shift, RopeTable rt) {
    constexpr int P = D + 8;  // padded row (elements): ldmatrix rows fall in different banks
    constexpr int kTile = tile_keys<W>();
    extern __shared__ __align__(16) gpu_bf16 smem[];
    gpu_bf16* sq = smem;
    auto sk = [&](int b) { return smem + (kQRows + b * kTile) * P; };
    auto sv = [&](int b) { return smem + (kQRows + (2 + b) * kTile) * P; };
    const int64_t i = blockIdx.x;
    const int kvh = blockIdx.y, z = blockIdx.z;
    const int group = g.n_head / g.n_head_kv, h0 = kvh * group;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    RAD_PHASE(g.ph, kAttnPhases, 0);
    // Until gpu_grid_wait: only positions, sequences, block tables and (in decode) earlier cache
    // positions, which no kernel of the step writes.
    const int lo = seq_of_row(cu, g.n_seq, i);
    if (g.single_only && cu[lo + 1] - cu[lo] != 1) return;  // the whole block: before any barrier
    const int32_t* table = bt + static_cast<int64_t>(lo) * g.bt_stride;
    const int p = pos[i];
    const int live = live_splits(g, p);
    if (z >= live) return;  // the whole block: no share of this row's context
    int j0, j1;             // this split's keys: [j0, j1)
    split_range(g, p, z, j0, j1);
    const int n_tiles = j1 > j0 ? (j1 - j0 + kTile - 1) / kTile : 0;
    const bool pre = n_tiles > 1;  // tile 1 loads with tile 0
    const bool own = g.own_row != 0;
    const int64_t head_off = static_cast<int64_t>(kvh) * D;
    const float* kown = kin + i * g.k_pitch + head_off;  // ROPE: the turned copy in shared memory once made
    const float* vown = vin + i * g.v_pitch + head_off;  // ROPE: its copy in shared memory once made

    // Keys [t0, t0 + kTile) of the cache into a tile, asynchronously; keys from j1 on are
    // zero-filled (masked; zeros keep them finite), and in decode the row's own key is skipped
    // (put_own writes it).
    // Not unrolled: the loop's six call sites unrolled eight times each were a third of the
    // kernel's code, which a block runs once through, fetching it cold (docs/GPU_KERNELS.md).
    auto load = [&](gpu_bf16* dst, const gpu_bf16* cache, int t0) {
#pragma unroll 1
        for (int e = threadIdx.x; e < kTile * D / 8; e += W * 32) {
            const int r = e / (D / 8), d = (e % (D / 8)) * 8;
            const int j = t0 + r;
            if (own && j == p) continue;
            const bool ok = j < j1;
            const int64_t slot = (paged_row_pow2(table, ok ? j : j0, block_shift) * g.n_head_kv + kvh) * D + d;
            cp_async16(&dst[r * P + d], cache + slot, ok);
        }
    };
    // The own row, narrowed as the cache holds it, into the tile that starts at t0 if it is there
    // (plain stores: the barrier after the tile's cp.async wait publishes them with it).
    auto put_own = [&](gpu_bf16* dst, const float* src, int t0) {
        if (!own || p < t0 || p >= t0 + kTile) return;
        for (int d = threadIdx.x * 8; d < D; d += W * 32 * 8) {
            const float4 a = *reinterpret_cast<const float4*>(src + d), b = *reinterpret_cast<const float4*>(src + d + 4);
            *reinterpret_cast<uint4*>(&dst[(p - t0) * P + d]) =
                make_uint4(pack_bf16(a.x, a.y), pack_bf16(a.z, a.w), pack_bf16(b.x, b.y), pack_bf16(b.z, b.w));
        }
    };

    // K(0), V(0), then with `pre` K(1), V(1): one commit group each, in that order
    auto first_loads = [&] {
        for (int t = 0; t < (pre ? 2 : 1); ++t) {
            load(sk(t), kc, j0 + t * kTile);
            cp_async_commit();
            load(sv(t), vc, j0 + t * kTile);
            cp_async_commit();
        }
    };
    // Before the wait: loading them after it (a switch since taken out) let the wait return 0.4
    // instead of 2.8 us after the qkv gemv's end, yet the keys came in later and decode was slower
    // (240.0 / 240.8 against 242.4 / 242.4 tok/s, H200, 2026-12-03).
    if (own && n_tiles > 0) first_loads();
    gpu_grid_wait();
    gpu_grid_release();
    RAD_PHASE(g.ph, kAttnPhases, 1);
    if constexpr (ROPE) {
        // The group's q heads turned into the tile and the own k row turned into shared memory
        // (put_own and the cache store read it there), the own k as a 17th row; with one split
        // both go back to their inputs turned. A thread keeps one column chunk c4 in every row it
        // takes (the block's threads are a multiple of D / 8), so it turns the same 4 pairs, c4 * 4
        // .. + 3 in either layout: their angles once, in registers, while its loads are in flight.
        // Neox pairs (j, j + D / 2): float4s at d = 4 c4 and d + D / 2; gptj (2j, 2j + 1): float4s
        // at d = 8 c4 and d + 4. The own v row loads beside them into shared memory, so that
        // put_own and the cache store cost no round trip of their own after the barrier.
        float* sko = reinterpret_cast<float*>(reinterpret_cast<char*>(smem) + dec_tiles_bytes<D, W>());
        float* svo = sko + D;
        const bool v_chunk = threadIdx.x < D / 4;
        const float4 vv = v_chunk ? *reinterpret_cast<const float4*>(vown + threadIdx.x * 4) : make_float4(0.f, 0.f, 0.f, 0.f);
        constexpr int T = W * 32, E = (kQRows + 1) * (D / 8), IT = (E + T - 1) / T;
        static_assert(T % (D / 8) == 0, "a thread's column chunk is the same in every row it takes");
        const int c4 = threadIdx.x % (D / 8);
        const int d = rt.neox ? c4 * 4 : c4 * 8, d2 = rt.neox ? d + D / 2 : d + 4;
        float4 a[IT], b[IT];
#pragma unroll
        for (int it = 0; it < IT; ++it) {
            const int e = threadIdx.x + it * T, r = e / (D / 8);
            const float* src = e >= E        ? nullptr
                               : r < group   ? q + i * g.q_pitch + static_cast<int64_t>(h0 + r) * D
                               : r == kQRows ? kown
                                             : nullptr;
            a[it] = b[it] = make_float4(0.f, 0.f, 0.f, 0.f);
            if (src) {
                a[it] = *reinterpret_cast<const float4*>(src + d);
                b[it] = *reinterpret_cast<const float4*>(src + d2);
            }
        }
        float cs[4], sn[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) rope_angle(rt, p, c4 * 4 + u, cs[u], sn[u]);
        const bool back = live == 1;
#pragma unroll
        for (int it = 0; it < IT; ++it) {
            const int e = threadIdx.x + it * T, r = e / (D / 8);
            if (e >= E) break;
            auto turn = [&](float& va, float& vb, int u) {
                const float x0 = va, x1 = vb;
                va = rope_first(x0, x1, cs[u], sn[u]);
                vb = rope_second(x0, x1, cs[u], sn[u]);
            };
            if (rt.neox) {  // pair u is (a[u], b[u])
                turn(a[it].x, b[it].x, 0);
                turn(a[it].y, b[it].y, 1);
                turn(a[it].z, b[it].z, 2);
                turn(a[it].w, b[it].w, 3);
            } else {  // pairs 0, 1 in a, 2, 3 in b
                turn(a[it].x, a[it].y, 0);
                turn(a[it].z, a[it].w, 1);
                turn(b[it].x, b[it].y, 2);
                turn(b[it].z, b[it].w, 3);
            }
            if (r < kQRows) {
                if (back && r < group) {
                    float* qr = q + i * g.q_pitch + static_cast<int64_t>(h0 + r) * D;
                    *reinterpret_cast<float4*>(qr + d) = a[it];
                    *reinterpret_cast<float4*>(qr + d2) = b[it];
                }
                *reinterpret_cast<uint2*>(&sq[r * P + d]) = make_uint2(pack_bf16(a[it].x, a[it].y), pack_bf16(a[it].z, a[it].w));
                *reinterpret_cast<uint2*>(&sq[r * P + d2]) = make_uint2(pack_bf16(b[it].x, b[it].y), pack_bf16(b[it].z, b[it].w));
            } else {
                *reinterpret_cast<float4*>(sko + d) = a[it];
                *reinterpret_cast<float4*>(sko + d2) = b[it];
                if (back) {
                    *reinterpret_cast<float4*>(kin + i * g.k_pitch + head_off + d) = a[it];
                    *reinterpret_cast<float4*>(kin + i * g.k_pitch + head_off + d2) = b[it];
                }
            }
        }
        if (v_chunk) *reinterpret_cast<float4*>(svo + threadIdx.x * 4) = vv;
        __syncthreads();  // sko, svo and sq are complete
        kown = sko;
        vown = svo;
    }
    if (n_tiles > 0) {
        if (own) {
            for (int t = 0; t < (pre ? 2 : 1); ++t) {
                put_own(sk(t), kown, j0 + t * kTile);
                put_own(sv(t), vown, j0 + t * kTile);
            }
        } else {
            first_loads();
        }
    }
    if (own && z == 0 && warp == 0) {  // the row's k (ROPE: turned) and v into its cache slot, for later steps
        const int64_t slot = (paged_row_pow2(table, p, block_shift) * g.n_head_kv + kvh) * D;
        for (int d = lane; d < D; d += 32) {
            kc[slot + d] = gpu_f32_to_bf16(kown[d]);
            vc[slot + d] = gpu_f32_to_bf16(vown[d]);
        }
    }
    if constexpr (!ROPE) {
        // Q: the group's heads as rows 0..group-1 of a 16-row tile, narrowed to bf16.
        for (int e = threadIdx.x; e < kQRows * D / 4; e += W * 32) {
            const int r = e / (D / 4), d = (e % (D / 4)) * 4;
            float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
            if (r < group) v = *reinterpret_cast<const float4*>(q + i * g.q_pitch + static_cast<int64_t>(h0 + r) * D + d);
            *reinterpret_cast<uint2*>(&sq[r * P + d]) = make_uint2(pack_bf16(v.x, v.y), pack_bf16(v.z, v.w));
        }
        __syncthreads();
    }
    RAD_PHASE(g.ph, kAttnPhases, 2);
    uint32_t qa[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) ldsm_x4(qa[kk], &sq[(lane % 16) * P + kk * 16 + (lane / 16) * 8]);

    const float scale_log2 = g.scale * kLog2e;
    const int kb = warp * 16;  // the warp's keys within a tile
    float o[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    // Rows lane/4 (a) and lane/4 + 8 (b): running max (log2 units) and this thread's share of the sum.
    float m_a = -FLT_MAX, m_b = -FLT_MAX, l_a = 0.f, l_b = 0.f;
    // Outstanding groups at the top of every iteration: K(t), V(t), in that order; at t = 0 with
    // `pre` K(1) and V(1) after them, which the iteration then does not issue.
    for (int t = 0, buf = 0; t < n_tiles; ++t, buf ^= 1) {
        const int t0 = j0 + t * kTile;
        const bool ahead = pre && t == 0;  // tile t + 1 is in flight already
        const bool more = t + 1 < n_tiles && !ahead;
        if (ahead)
            cp_async_wait_group<3>();
        else
            cp_async_wait_all_but_newest();  // K(t) has landed
        __syncthreads();
        if (more) {
            load(sk(buf ^ 1), kc, t0 + kTile);
            put_own(sk(buf ^ 1), kown, t0 + kTile);
        }
        if (!ahead) cp_async_commit();
        const int wj = t0 + kb;
        const bool active = wj < j1;  // the warp has keys in this tile
        uint32_t pa[1][4];            // P as the A fragment of one k16 step
        if (active) {
            float sc[2][4] = {{0.f, 0.f, 0.f, 0.f}, {0.f, 0.f, 0.f, 0.f}};
            const gpu_bf16* kt = sk(buf);
#pragma unroll
            for (int kk = 0; kk < D / 16; ++kk) {
                uint32_t b[4];
                ldsm_x4(b, &kt[(kb + (lane / 16) * 8 + (lane % 8)) * P + kk * 16 + ((lane / 8) % 2) * 8]);
                mma16816(sc[0], qa[kk], b[0], b[1]);
                mma16816(sc[1], qa[kk], b[2], b[3]);
            }
            // Scale (log2 units), cap, mask the keys from j1 on; every row sees the same keys.
            float mx_a = m_a, mx_b = m_b;
#pragma unroll
            for (int nt = 0; nt < 2; ++nt)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int j = wj + nt * 8 + (lane % 4) * 2 + (e % 2);
                    float v = score_log2(sc[nt][e], g.scale, g.softcap, scale_log2);
                    v = j < j1 ? v : -FLT_MAX;
                    sc[nt][e] = v;
                    if (e < 2)
                        mx_a = fmaxf(mx_a, v);
                    else
                        mx_b = fmaxf(mx_b, v);
                }
            float ca, cb, sa = 0.f, sb = 0.f;
            masked_probs(sc, mx_a, mx_b, m_a, m_b, ca, cb, sa, sb, pa);
            l_a = l_a * ca + sa;
            l_b = l_b * cb + sb;
            rescale_o(o, ca, cb);
        }
        if (ahead)
            cp_async_wait_group<2>();
        else
            cp_async_wait_all_but_newest();  // V(t) has landed (K(t+1) may not)
        __syncthreads();
        if (more) {
            load(sv(buf ^ 1), vc, t0 + kTile);
            put_own(sv(buf ^ 1), vown, t0 + kTile);
        }
        if (!ahead) cp_async_commit();
        if (active) {
            const gpu_bf16* vt = sv(buf);
#pragma unroll
            for (int nt = 0; nt < D / 8; nt += 2) {
                uint32_t b[4];
                ldsm_x4_t(b, &vt[(kb + ((lane / 8) % 2) * 8 + (lane % 8)) * P + nt * 8 + (lane / 16) * 8]);
                mma16816(o[nt], pa[0], b[0], b[1]);
                mma16816(o[nt + 1], pa[0], b[2], b[3]);
            }
        }
    }
    l_a = quad_sum(l_a);
    l_b = quad_sum(l_b);
    RAD_PHASE(g.ph, kAttnPhases, 3);

    // The warps' states through shared memory (the tiles are done with), then one thread per
    // (head, dim) merges them. The measuring build does it twice (kPhasePasses), stamping after
    // each: what the first pass costs beyond the second is its instructions' fetch.
    for (int pass = 0; pass < kPhasePasses; ++pass) {
        asm volatile("cp.async.wait_all;\n" ::);  // the last (empty) groups
        __syncthreads();
        float* so = reinterpret_cast<float*>(smem);  // [warp][row][D]
        float* sm = so + W * kQRows * D;             // [warp][row]
        float* sl = sm + W * kQRows;
        const int ra = lane / 4, rb = ra + 8;
#pragma unroll
        for (int j = 0; j < D / 8; ++j) {
            const int d = j * 8 + (lane % 4) * 2;
            *reinterpret_cast<float2*>(&so[(warp * kQRows + ra) * D + d]) = make_float2(o[j][0], o[j][1]);
            *reinterpret_cast<float2*>(&so[(warp * kQRows + rb) * D + d]) = make_float2(o[j][2], o[j][3]);
        }
        if (lane % 4 == 0) {
            sm[warp * kQRows + ra] = m_a;
            sm[warp * kQRows + rb] = m_b;
            sl[warp * kQRows + ra] = l_a;
            sl[warp * kQRows + rb] = l_b;
        }
        __syncthreads();
        constexpr float kLn2 = 0.6931471805599453f;
        for (int e = threadIdx.x; e < group * D; e += W * 32) {
            const int r = e / D, d = e % D;
            float M = -FLT_MAX;
#pragma unroll
            for (int w = 0; w < W; ++w) M = fmaxf(M, sm[w * kQRows + r]);
            float L = 0.f, acc = 0.f;
#pragma unroll
            for (int w = 0; w < W; ++w) {
                const float c = fast_exp2(sm[w * kQRows + r] - M);
                L += sl[w * kQRows + r] * c;
                acc += so[(w * kQRows + r) * D + d] * c;
            }
            if (live == 1) {
                y[i * g.y_pitch + static_cast<int64_t>(h0 + r) * D + d] = L > 0.f ? acc / L : 0.f;
            } else {  // partial: [row][head][split] of (m, l, acc[head_dim]), m in natural-log units
                float* pp = part + ((i * g.n_head + h0 + r) * g.splits + z) * (D + 2);
                pp[2 + d] = acc;
                if (d == 0) {
                    pp[0] = M * kLn2;
                    pp[1] = L;
                }
            }
        }
        RAD_PHASE(g.ph, kAttnPhases, 4 + pass);
    }
}

// The kernel for one head_dim and warp count. Above the default 48 KiB of dynamic shared memory a
// kernel must ask for it, once per kernel: a static per instantiation (one inside a generic lambda
// was shared by both head_dims, whose kernels have the same type).
template <int D, int W, bool ROPE>
int launch_tc(const RadArgs* a, const AttnGeom& g, int64_t n, float* part, const RopeTable& rt) {
    constexpr size_t smem = dec_smem_bytes<D, W, ROPE>();
    static const gpuError_t attr =
        gpuFuncSetAttribute((k_attend_tc<D, W, ROPE>), gpuFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (attr != gpuSuccess) return RAD_E_INTERNAL;
    const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(g.n_head_kv), static_cast<unsigned>(g.splits));
    auto* q = static_cast<float*>(a->t[0].data);  // written (turned) only with ROPE
    auto* k = static_cast<float*>(a->t[1].data);
    const auto* v = static_cast<const float*>(a->t[2].data);
    auto *kc = static_cast<gpu_bf16*>(a->t[3].data), *vc = static_cast<gpu_bf16*>(a->t[4].data);
    const auto *pos = static_cast<const int32_t*>(a->t[5].data), *cu = static_cast<const int32_t*>(a->t[6].data);
    const auto* bt = static_cast<const int32_t*>(a->t[7].data);
    auto* y = static_cast<float*>(a->t[8].data);
    AttnGeom gl = g;
#ifdef RAD_GPU_PHASES
    gl.ph = phase_slots(kPhaseAttention, static_cast<int64_t>(grid.x) * grid.y * grid.z, kAttnPhases, stream_of(a));
#endif
    gpu_launch(k_attend_tc<D, W, ROPE>, grid, W * 32, smem, stream_of(a), q, k, v, kc, vc, pos, cu, bt, y, part, gl,
               block_shift_of(g.block), rt);
    return launched();
}

template <int W>
int launch_tc_for(const RadArgs* a, const AttnGeom& g, int64_t n, float* part, const RopeTable* rope) {
    const RopeTable none{};
    if (rope) return g.head_dim == 128 ? launch_tc<128, W, true>(a, g, n, part, *rope) : launch_tc<64, W, true>(a, g, n, part, *rope);
    return g.head_dim == 128 ? launch_tc<128, W, false>(a, g, n, part, none) : launch_tc<64, W, false>(a, g, n, part, none);
}

// The split count of the 8-warp form for n rows, or 0 where the 4-warp form serves them: a few
// rows (up to 32 row x kv-head blocks a split) whose 4-warp blocks would not all fit on the card
// at once (their shared memory sized as the ROPE form's, the larger) take 8 warps, and splits
// live only as the context needs them (two 128-key tiles each): as many splits as the block
// tables' width needs that way (one for a width of up to 256 positions: no k_merge launch), at
// most one block a multiprocessor. Measured on the 8B shape (H200, 2026-12-03, two rounds): 2
// and 4 rows at 512-640 positions (512 and 544 4-warp blocks, 396 fit) 288.5 -> 297.9 and
// 618 -> 635 tok/s; but 1 row at 1,024-1,152 positions (256 blocks, all resident) 244.8 ->
// 238.8, the 8-warp blocks too few to spread the reads, and at 128-256 positions level.
int eight_warp_splits(const AttnGeom& g, int64_t n) {
    const int64_t sms = sm_count() > 0 ? sm_count() : 132;
    const uint64_t smem4 = g.head_dim == 128 ? dec_smem_bytes<128, 4, true>() : dec_smem_bytes<64, 4, true>();
    const int64_t per_sm = smem_per_sm() > 0 ? std::max<int64_t>(1, static_cast<int64_t>(smem_per_sm() / (smem4 + 1024))) : 3;
    const int64_t head_blocks = n * g.n_head_kv;
    const bool one_wave = head_blocks * g.splits <= per_sm * sms;
    if (head_blocks > 32 || one_wave) return 0;
    const int64_t cap = std::max<int64_t>(1, sms / std::max<int64_t>(1, head_blocks));
    int64_t ctx = static_cast<int64_t>(g.bt_stride) * g.block;
    if (g.window > 0 && g.window < ctx) ctx = g.window;
    const int64_t need = std::max<int64_t>(1, (ctx + 2 * tile_keys<8>() - 1) / (2 * tile_keys<8>()));
    return static_cast<int>(std::min<int64_t>({static_cast<int64_t>(g.splits), cap, need}));
}

}  // namespace
#endif

int attention_decode_tc(const RadArgs* a, AttnGeom& g, int64_t n, float* part, const RopeTable* rope) {
#if RAD_GPU_CUDA
    const RadTensor *q = &a->t[0], *k = &a->t[1], *v = &a->t[2], *kc = &a->t[3];
    const int group = g.n_head / g.n_head_kv;
    if (kc->dtype != RAD_BF16 || group > kQRows || (g.head_dim != 64 && g.head_dim != 128)) return RAD_E_UNSUPPORTED;
    // 16-byte loads of q and of the own k / v rows
    if (g.q_pitch % 4 || g.k_pitch % 4 || g.v_pitch % 4 || reinterpret_cast<uintptr_t>(q->data) % 16 ||
        reinterpret_cast<uintptr_t>(k->data) % 16 || reinterpret_cast<uintptr_t>(v->data) % 16)
        return RAD_E_UNSUPPORTED;
    if (rope && (!g.own_row || rope->half * 2 != g.head_dim)) return RAD_E_UNSUPPORTED;
    if (block_shift_of(g.block) < 0) return RAD_E_UNSUPPORTED;  // its cache rows by shifts only
    const int big_splits = eight_warp_splits(g, n);
    if (big_splits == 0) return launch_tc_for<4>(a, g, n, part, rope);
    g.live_keys = 2 * tile_keys<8>();
    g.splits = big_splits;
    return launch_tc_for<8>(a, g, n, part, rope);
#else
    (void)a;
    (void)g;
    (void)n;
    (void)part;
    (void)rope;
    return RAD_E_UNSUPPORTED;
#endif
}

}  // namespace gpu
