// k_attention_flash.cu: prefill attention on the tensor cores (CUDA, sm_80 and later).
//
// Flash-attention shaped: a block of 8 warps owns 128 query rows of one sequence and one query
// head; each warp keeps 16 rows' scores, running max and sum, and output in registers. Key and
// value tiles of 64 positions come from the paged bf16 cache into shared memory; Q.K^T and P.V run
// on the tensor cores (bf16 in, f32 accumulate), P narrowed to bf16 in registers as flash-attention
// does. Blocks map to (sequence, 128-row tile) by a search of cu_seqlens on the card, so the launch
// needs nothing of the step on the host: grid.x = n/128 + n_seq bounds the tiles of any batch.
// K and V tiles stream in with cp.async into two buffers each, each overlapping the other half of
// the tile's work. Tiles every row of a warp sees whole (all but the diagonal and window edges)
// take a softmax without masks: one fused multiply-add and one exp2 a score, which matters
// because at head_dim 128 the per-score arithmetic costs about as much issue time as the mma.
//
// Both products run as Hopper's wgmma (sm_90a, this build's only target): each half of the block
// is a warpgroup of 4 warps whose 64 rows multiply the K or V tile straight from shared memory, so
// the tile is read once per warpgroup instead of once per warp through ldmatrix (with 16 rows a
// warp an mma.sync loop is bound by shared-memory reads; that form measured level or 0.9% slower,
// prefill 4,096 29,679 / 29,730 against 29,932 / 30,040 tok/s, H200, 2026-12-01, and went). The
// tiles sit in wgmma's core-matrix layout (k_wgmma.h); Q, P and O keep the mma.m16n8k16 fragments.
#include <cfloat>

#include "k_mma.h"
#include "k_paged.h"
#if RAD_GPU_CUDA
#include "k_wgmma.h"  // Hopper only (CUDA): HIP builds compile the mma.sync path out too
#endif

namespace gpu {

#if RAD_GPU_CUDA
namespace {
using namespace mma;

constexpr int kRows = 128, kKeys = 64;

constexpr int kWarpsFa = 8, kThreadsFa = kWarpsFa * 32;  // 8 warps x 16 rows = kRows

// Element offset of (key r, dim d) in a K or V tile: wgmma's core-matrix layout (d a multiple of 8).
template <int D>
__device__ __forceinline__ int tile_offset(int r, int d) {
    return static_cast<int>(wgmma::tile_chunk_offset<D>(r, d / 8) / sizeof(gpu_bf16));
}
template <int D>
constexpr int tile_elems() {
    return kKeys * D;
}

// Where a thread's 16-byte pieces of one 64-position tile live in the paged cache (element
// offsets, kv head and dim included): the block table is read once a tile for K and V both, and
// before the barrier that precedes the tile's loads, so the reads' latency passes while the block
// waits there. With the lookup inside the copy loop every warp stalled between each table read
// and its cp.async, four times a tile for K and again for V (prefill 4,096: 29.9k -> 31.9k tok/s).
template <int D>
struct TileSrc {
    static constexpr int kPieces = kKeys * D / 8 / kThreadsFa;
    static_assert(kKeys * D / 8 % kThreadsFa == 0, "a tile's 16-byte pieces spread evenly over the threads");
    int64_t off[kPieces];
};

template <int D>
__device__ __forceinline__ TileSrc<D> tile_src(const int32_t* table, int j0, int last, const FlashGeom& g, int kvh) {
    TileSrc<D> src;
#pragma unroll
    for (int i = 0; i < TileSrc<D>::kPieces; ++i) {
        const int e = threadIdx.x + i * kThreadsFa, r = e / (D / 8), d = (e % (D / 8)) * 8;
        const int jj = min(j0 + r, last);  // past the last position: a valid address, zero-filled
        src.off[i] = (paged_row(table, jj, g.block, g.block_shift) * g.n_head_kv + kvh) * D + d;
    }
    return src;
}

// One tile of K or V into shared memory, asynchronously; positions past `last` are zero-filled
// (they are masked, and zeros keep them finite).
template <int D>
__device__ __forceinline__ void load_tile(gpu_bf16* dst, const gpu_bf16* cache, const TileSrc<D>& src, int j0, int last) {
#pragma unroll
    for (int i = 0; i < TileSrc<D>::kPieces; ++i) {
        const int e = threadIdx.x + i * kThreadsFa, r = e / (D / 8), d = (e % (D / 8)) * 8;
        cp_async16(&dst[tile_offset<D>(r, d)], cache + src.off[i], j0 + r <= last);
    }
}

// Dynamic shared memory of k_flash<D>: two K and two V tiles (the Q tile, kRows padded rows,
// before the loop).
template <int D>
constexpr size_t flash_smem_bytes() {
    const size_t tiles = 4u * tile_elems<D>(), q = static_cast<size_t>(kRows) * (D + 8);
    return (tiles > q ? tiles : q) * sizeof(gpu_bf16);
}

// Waits for the oldest outstanding tile and publishes it to the block and to the async proxy the
// tensor cores read shared memory through.
__device__ __forceinline__ void tile_landed() {
    cp_async_wait_all_but_newest();
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma::fence_proxy_async();
#endif
    __syncthreads();
}

// S (16 rows x kKeys keys of this warp) = Q K^T from the K tile kt: one warpgroup wgmma chain.
template <int D>
__device__ __forceinline__ void qk_tile(float (&sc)[kKeys / 8][4], const uint32_t (&qa)[D / 16][4], const gpu_bf16* kt) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma::chain_and_wait(sc, [&] {
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) wgmma::wgmma_m64n64k16<0>(sc, qa[kk], wgmma::tile_desc_k_major<D>(kt, kk), kk > 0);
    });
#endif
}

// O += P V from the V tile vt: k = keys (16 per step), n = head dims; V rows are keys (MN-major).
template <int D>
__device__ __forceinline__ void pv_tile(float (&o)[D / 8][4], const uint32_t (&pa16)[kKeys / 16][4], const gpu_bf16* vt) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    wgmma::chain_and_wait(o, [&] {  // o was rescaled, pa16 written, since the last chain
#pragma unroll
        for (int kk = 0; kk < kKeys / 16; ++kk) {
            if constexpr (D == 128)
                wgmma::wgmma_m64n128k16<1>(o, pa16[kk], wgmma::tile_desc_mn_major<D>(vt, kk), 1);
            else
                wgmma::wgmma_m64n64k16<1>(o, pa16[kk], wgmma::tile_desc_mn_major<D>(vt, kk), 1);
        }
    });
#endif
}

template <int D>
__global__ void __launch_bounds__(kThreadsFa)
    k_flash(const float* __restrict__ q, const gpu_bf16* __restrict__ kc, const gpu_bf16* __restrict__ vc, const int32_t* __restrict__ pos,
            const int32_t* __restrict__ cu, const int32_t* __restrict__ bt, float* __restrict__ y, FlashGeom g) {
    gpu_grid_wait();
    gpu_grid_release();
    constexpr int P = D + 8;  // the Q tile's padded row (elements): ldmatrix rows fall in different banks
    extern __shared__ __align__(16) gpu_bf16 smem[];
    // K(j) in sk(j % 2), V(j) in sv(j % 2): the next tile loads into the other buffer, which
    // every warp left before the barrier that precedes the load, so one barrier per K and one
    // per V tile suffice (a single buffer needed a second barrier before each refill).
    auto sk = [&](int b) { return smem + b * tile_elems<D>(); };
    auto sv = [&](int b) { return smem + (2 + b) * tile_elems<D>(); };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int h = blockIdx.y, kvh = h / (g.n_head / g.n_head_kv);
    // Heaviest tiles first: a causal sequence's last tile reads every key, its first one tile of
    // them, and blocks start in index order, so counting blockIdx.x down keeps the long blocks
    // out of the grid's tail.
    const int bx = static_cast<int>(gridDim.x - 1 - blockIdx.x);
    // This block's (sequence, tile): sequence s owns the blocks from cu[s] / kRows + s on, which
    // is increasing in s and leaves each sequence room for its ceil(rows / kRows) tiles, so a
    // binary search finds it (a walk over every sequence cost ~0.5 ms a layer with 256 decode
    // rows in a mixed step); blocks past a sequence's tiles return.
    int s = 0;
    for (int hi = g.n_seq; hi - s > 1;) {
        const int mid = (s + hi) / 2;
        if (cu[mid] / kRows + mid <= bx)
            s = mid;
        else
            hi = mid;
    }
    const int t = bx - (cu[s] / kRows + s), rows = cu[s + 1] - cu[s];
    if (t < 0 || t * kRows >= rows || (g.multi_only && rows == 1)) return;
    const int r0 = cu[s] + t * kRows, r1 = min(cu[s + 1], r0 + kRows);
    const int32_t* table = bt + static_cast<int64_t>(s) * g.bt_stride;
    const int p_first = pos[r0], p_last = pos[r1 - 1];

    // Q tile -> bf16 in shared memory (rows past the sequence are zero), then into registers.
    // Unrolled with the block size known, so a thread's loads all go out before its first store.
#pragma unroll
    for (int i = 0; i < kRows * D / 4 / kThreadsFa; ++i) {
        const int e = threadIdx.x + i * kThreadsFa, r = e / (D / 4), d = (e % (D / 4)) * 4;
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r0 + r < r1)
            v = *reinterpret_cast<const float4*>(q + static_cast<int64_t>(r0 + r) * g.q_pitch + static_cast<int64_t>(h) * D + d);
        *reinterpret_cast<uint2*>(&smem[r * P + d]) = make_uint2(pack_bf16(v.x, v.y), pack_bf16(v.z, v.w));
    }
    __syncthreads();
    uint32_t qa[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) ldsm_x4(qa[kk], &smem[(warp * 16 + (lane % 16)) * P + kk * 16 + (lane / 16) * 8]);
    __syncthreads();  // the Q staging area becomes the K and V tiles

    // Rows this thread accumulates: warp*16 + lane/4 and +8.
    const int ra = r0 + warp * 16 + lane / 4, rb = ra + 8;
    const int pa = ra < r1 ? pos[ra] : -1, pb = rb < r1 ? pos[rb] : -1;
    // The warp's lowest and highest position (-1 for rows past the sequence): a key tile every
    // row of the warp sees whole needs no mask, and one none of them sees needs no work.
    int pmin_w = min(pa, pb), pmax_w = max(pa, pb);
    for (int o = 16; o > 0; o /= 2) {
        pmin_w = min(pmin_w, __shfl_xor_sync(0xffffffffu, pmin_w, o));
        pmax_w = max(pmax_w, __shfl_xor_sync(0xffffffffu, pmax_w, o));
    }
    // wgmma is a warpgroup's instruction: its 64 rows take a tile when any of them sees it.
    const int wg_first = r0 + (warp / 4) * 64, wg_last = min(r1, wg_first + 64) - 1;
    const int pmax_wg = wg_first <= wg_last ? pos[wg_last] : -1;
    const float scale_log2 = g.scale * kLog2e;
    float o[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    // Running max in log2 units (score * scale * log2 e, after the cap), running sum.
    float m_a = -FLT_MAX, m_b = -FLT_MAX, l_a = 0.f, l_b = 0.f;

    // Pipeline: K(j+1) loads while S(j), its softmax and P.V(j) run, V(j+1) while P.V(j) and
    // S(j+1) run. Outstanding groups at the top of every iteration: K(j), V(j), in that order.
    const int j_begin = g.window > 0 ? max(0, p_first - g.window + 1) : 0;
    const int j_first = (j_begin / kKeys) * kKeys;
    {
        const TileSrc<D> src = tile_src<D>(table, j_first, p_last, g, kvh);
        load_tile<D>(sk(0), kc, src, j_first, p_last);
        cp_async_commit();
        load_tile<D>(sv(0), vc, src, j_first, p_last);
        cp_async_commit();
    }
    for (int j0 = j_first, buf = 0; j0 <= p_last; j0 += kKeys, buf ^= 1) {
        const bool more = j0 + kKeys <= p_last;
        TileSrc<D> next;  // the next tile's table reads go out before the wait
        if (more) next = tile_src<D>(table, j0 + kKeys, p_last, g, kvh);
        tile_landed();  // K(j)
        if (more) load_tile<D>(sk(buf ^ 1), kc, next, j0 + kKeys, p_last);
        cp_async_commit();
        // Warps whose rows all end before this tile (the diagonal tiles of the block's first
        // rows) skip its softmax (P = 0); they still take part in the barriers and loads, and the
        // products are the warpgroup's.
        const bool active = j0 <= pmax_w;
        const bool mma_active = j0 <= pmax_wg;
        uint32_t pa16[kKeys / 16][4];  // P as A fragments: key tile pairs -> one k16 step
        float sc[kKeys / 8][4];        // S = Q K^T for 16 rows x 64 keys: 8 column tiles of 8 keys
        if (mma_active) qk_tile<D>(sc, qa, sk(buf));
        if (mma_active && !active) {
#pragma unroll
            for (int kk = 0; kk < kKeys / 16; ++kk) pa16[kk][0] = pa16[kk][1] = pa16[kk][2] = pa16[kk][3] = 0u;
        }
        if (active) {
            float ca, cb, sa = 0.f, sb = 0.f;
            const bool whole = g.softcap <= 0.f && j0 + kKeys - 1 <= pmin_w && (g.window <= 0 || pmax_w - j0 < g.window);
            if (whole) {
                // Every key visible to every row, no cap: the max of the raw scores, then one
                // fused multiply-add and one exp2 a score.
                float mx_a = -FLT_MAX, mx_b = -FLT_MAX;
#pragma unroll
                for (int nt = 0; nt < kKeys / 8; ++nt) {
                    mx_a = fmaxf(mx_a, fmaxf(sc[nt][0], sc[nt][1]));
                    mx_b = fmaxf(mx_b, fmaxf(sc[nt][2], sc[nt][3]));
                }
                mx_a = quad_max(mx_a);
                mx_b = quad_max(mx_b);
                mx_a = fmaxf(m_a, mx_a * scale_log2);
                mx_b = fmaxf(m_b, mx_b * scale_log2);
                ca = fast_exp2(m_a - mx_a);
                cb = fast_exp2(m_b - mx_b);
                m_a = mx_a;
                m_b = mx_b;
#pragma unroll
                for (int nt = 0; nt < kKeys / 8; ++nt) {
                    const float e0 = fast_exp2(fmaf(sc[nt][0], scale_log2, -mx_a));
                    const float e1 = fast_exp2(fmaf(sc[nt][1], scale_log2, -mx_a));
                    const float e2 = fast_exp2(fmaf(sc[nt][2], scale_log2, -mx_b));
                    const float e3 = fast_exp2(fmaf(sc[nt][3], scale_log2, -mx_b));
                    sa += e0 + e1;
                    sb += e2 + e3;
                    pa16[nt / 2][(nt % 2) * 2 + 0] = pack_bf16(e0, e1);
                    pa16[nt / 2][(nt % 2) * 2 + 1] = pack_bf16(e2, e3);
                }
            } else {
                // The diagonal, window edges and capped scores: scale, cap, mask each score.
                float mx_a = m_a, mx_b = m_b;
#pragma unroll
                for (int nt = 0; nt < kKeys / 8; ++nt)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int j = j0 + nt * 8 + (lane % 4) * 2 + (e % 2);
                        const int p = e < 2 ? pa : pb;
                        float v = score_log2(sc[nt][e], g.scale, g.softcap, scale_log2);
                        const bool ok = p >= 0 && j <= p && (g.window <= 0 || p - j < g.window);
                        v = ok ? v : -FLT_MAX;
                        sc[nt][e] = v;
                        if (e < 2)
                            mx_a = fmaxf(mx_a, v);
                        else
                            mx_b = fmaxf(mx_b, v);
                    }
                masked_probs(sc, mx_a, mx_b, m_a, m_b, ca, cb, sa, sb, pa16);
            }
            l_a = l_a * ca + sa;
            l_b = l_b * cb + sb;
            rescale_o(o, ca, cb);
        }
        tile_landed();  // V(j) (K(j+1) may still be in flight)
        if (more) load_tile<D>(sv(buf ^ 1), vc, next, j0 + kKeys, p_last);
        cp_async_commit();
        if (mma_active) pv_tile<D>(o, pa16, sv(buf));
    }
    l_a = quad_sum(l_a);
    l_b = quad_sum(l_b);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
        const int d = j * 8 + (lane % 4) * 2;
        if (ra < r1) {
            float* out = y + static_cast<int64_t>(ra) * g.y_pitch + static_cast<int64_t>(h) * D + d;
            *reinterpret_cast<float2*>(out) = make_float2(o[j][0] / l_a, o[j][1] / l_a);
        }
        if (rb < r1) {
            float* out = y + static_cast<int64_t>(rb) * g.y_pitch + static_cast<int64_t>(h) * D + d;
            *reinterpret_cast<float2*>(out) = make_float2(o[j][2] / l_b, o[j][3] / l_b);
        }
    }
}

}  // namespace
#endif

// RAD_E_UNSUPPORTED when this build or shape has no tensor-core path (the caller falls back).
int attention_flash(const RadArgs* a, const FlashGeom& g, int64_t n, int head_dim) {
#if RAD_GPU_CUDA
    const RadTensor *q = &a->t[0], *kc = &a->t[3], *vc = &a->t[4], *pos = &a->t[5], *cu = &a->t[6], *bt = &a->t[7];
    RadTensor* y = &a->t[8];
    if (kc->dtype != RAD_BF16 || g.q_pitch % 4 || reinterpret_cast<uintptr_t>(q->data) % 16) return RAD_E_UNSUPPORTED;
    FlashGeom geo = g;
    geo.block_shift = block_shift_of(g.block);
    const dim3 grid(static_cast<unsigned>((n + kRows - 1) / kRows + g.n_seq), static_cast<unsigned>(g.n_head));
    auto args = [&](auto kernel, size_t smem) -> int {
        // Above the default 48 KiB of dynamic shared memory a kernel must ask for it, once.
        static const gpuError_t attr = gpuFuncSetAttribute(kernel, gpuFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
        if (attr != gpuSuccess) return RAD_E_INTERNAL;
        gpu_launch(kernel, grid, kThreadsFa, smem, stream_of(a), static_cast<const float*>(q->data), static_cast<const gpu_bf16*>(kc->data),
                   static_cast<const gpu_bf16*>(vc->data), static_cast<const int32_t*>(pos->data), static_cast<const int32_t*>(cu->data),
                   static_cast<const int32_t*>(bt->data), static_cast<float*>(y->data), geo);
        return launched();
    };
    if (head_dim == 128) return args(k_flash<128>, flash_smem_bytes<128>());
    if (head_dim == 64) return args(k_flash<64>, flash_smem_bytes<64>());
#else
    (void)a;
    (void)g;
    (void)n;
    (void)head_dim;
#endif
    return RAD_E_UNSUPPORTED;
}

}  // namespace gpu
