// k_attention_flash.cu: prefill attention on the tensor cores (CUDA, sm_80 and later).
//
// Flash-attention shaped: a block of 8 warps owns 128 query rows of one sequence and one query
// head; each warp keeps 16 rows' scores, running max and sum, and output in registers. Key and
// value tiles of 64 positions come from the paged bf16 cache into shared memory; Q.K^T and P.V run
// as mma.m16n8k16 (bf16 in, f32 accumulate), P narrowed to bf16 in registers as flash-attention
// does. Blocks map to (sequence, 128-row tile) by a search of cu_seqlens on the card, so the launch
// needs nothing of the step on the host: grid.x = n/128 + n_seq bounds the tiles of any batch.
// K and V tiles stream in with cp.async, each overlapping the other half of the tile's work.
#include <cfloat>

#include "k_common.h"

namespace gpu {

#if RAD_GPU_CUDA
namespace {

constexpr int kRows = 128, kKeys = 64;

__device__ __forceinline__ uint32_t pack_bf16(float a, float b) {
    __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&v);
}
__device__ __forceinline__ void mma16816(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void ldsm_x4(uint32_t* r, const void* p) {
    const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t* r, const void* p) {
    const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(a));
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
    const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    const int n = valid ? 16 : 0;  // 0: fill the 16 bytes with zeros
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(a), "l"(gmem), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all_but_newest() { asm volatile("cp.async.wait_group 1;\n" ::); }

constexpr int kWarpsFa = 8;  // 8 warps x 16 rows = kRows
constexpr float kLog2e = 1.4426950408889634f;

// One 64-position tile of K or V from the paged cache into shared memory, asynchronously;
// positions past `last` are zero-filled (they are masked, and zeros keep them finite).
template <int D>
__device__ __forceinline__ void load_tile(gpu_bf16* dst, const gpu_bf16* cache, const int32_t* table, int j0, int last, int block,
                                          int n_head_kv, int kvh) {
    constexpr int P = D + 8;
    for (int e = threadIdx.x; e < kKeys * D / 8; e += kWarpsFa * 32) {
        const int r = e / (D / 8), d = (e % (D / 8)) * 8;
        const int j = j0 + r;
        const bool ok = j <= last;
        const int jj = ok ? j : last;
        const int64_t slot = ((static_cast<int64_t>(table[jj / block]) * block + jj % block) * n_head_kv + kvh) * D + d;
        cp_async16(&dst[r * P + d], cache + slot, ok);
    }
}

template <int D>
__global__ void __launch_bounds__(kWarpsFa * 32) k_flash(const float* __restrict__ q, const gpu_bf16* __restrict__ kc,
                                                         const gpu_bf16* __restrict__ vc, const int32_t* __restrict__ pos,
                                                         const int32_t* __restrict__ cu, const int32_t* __restrict__ bt,
                                                         float* __restrict__ y, FlashGeom g) {
    gpu_grid_wait();
    gpu_grid_release();
    constexpr int P = D + 8;  // padded row (elements): ldmatrix rows fall in different banks
    __shared__ __align__(16) gpu_bf16 smem[2 * kKeys * P];  // K and V tiles; the Q tile before the loop
    gpu_bf16* sk = smem;
    gpu_bf16* sv = smem + kKeys * P;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int h = blockIdx.y, kvh = h / (g.n_head / g.n_head_kv);
    // This block's (sequence, tile): sequence s owns the blocks from cu[s] / kRows + s on, which
    // is increasing in s and leaves each sequence room for its ceil(rows / kRows) tiles, so a
    // binary search finds it (a walk over every sequence cost ~0.5 ms a layer with 256 decode
    // rows in a mixed step); blocks past a sequence's tiles return.
    int s = 0;
    for (int hi = g.n_seq; hi - s > 1;) {
        const int mid = (s + hi) / 2;
        if (cu[mid] / kRows + mid <= static_cast<int>(blockIdx.x)) s = mid; else hi = mid;
    }
    const int t = static_cast<int>(blockIdx.x) - (cu[s] / kRows + s), rows = cu[s + 1] - cu[s];
    if (t < 0 || t * kRows >= rows || (g.multi_only && rows == 1)) return;
    const int r0 = cu[s] + t * kRows, r1 = min(cu[s + 1], r0 + kRows);
    const int32_t* table = bt + static_cast<int64_t>(s) * g.bt_stride;
    const int p_first = pos[r0], p_last = pos[r1 - 1];

    // Q tile -> bf16 in shared memory (rows past the sequence are zero), then into registers.
    for (int e = threadIdx.x; e < kRows * D / 4; e += blockDim.x) {
        const int r = e / (D / 4), d = (e % (D / 4)) * 4;
        float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
        if (r0 + r < r1) v = *reinterpret_cast<const float4*>(q + static_cast<int64_t>(r0 + r) * g.q_pitch + static_cast<int64_t>(h) * D + d);
        *reinterpret_cast<uint2*>(&smem[r * P + d]) = make_uint2(pack_bf16(v.x, v.y), pack_bf16(v.z, v.w));
    }
    __syncthreads();
    uint32_t qa[D / 16][4];
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
        ldsm_x4(qa[kk], &smem[(warp * 16 + (lane % 16)) * P + kk * 16 + (lane / 16) * 8]);
    __syncthreads();  // the Q staging area becomes the K and V tiles

    // Rows this thread accumulates: warp*16 + lane/4 and +8.
    const int ra = r0 + warp * 16 + lane / 4, rb = ra + 8;
    const int pa = ra < r1 ? pos[ra] : -1, pb = rb < r1 ? pos[rb] : -1;
    float o[D / 8][4];
#pragma unroll
    for (int j = 0; j < D / 8; ++j) o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.f;
    float m_a = -FLT_MAX, m_b = -FLT_MAX, l_a = 0.f, l_b = 0.f;

    // Pipeline: K(j+1) loads while tile j's softmax and P.V run, V(j+1) while S(j+1) runs.
    // Outstanding groups at the top of every iteration: K(j), V(j), in that order.
    const int j_begin = g.window > 0 ? max(0, p_first - g.window + 1) : 0;
    const int j_first = (j_begin / kKeys) * kKeys;
    load_tile<D>(sk, kc, table, j_first, p_last, g.block, g.n_head_kv, kvh);
    cp_async_commit();
    load_tile<D>(sv, vc, table, j_first, p_last, g.block, g.n_head_kv, kvh);
    cp_async_commit();
    for (int j0 = j_first; j0 <= p_last; j0 += kKeys) {
        const bool more = j0 + kKeys <= p_last;
        cp_async_wait_all_but_newest();  // K(j) has landed
        __syncthreads();
        // S = Q K^T for 16 rows x 64 keys: 8 column tiles of 8 keys.
        float sc[kKeys / 8][4];
#pragma unroll
        for (int nt = 0; nt < kKeys / 8; ++nt) sc[nt][0] = sc[nt][1] = sc[nt][2] = sc[nt][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
            for (int nt = 0; nt < kKeys / 8; nt += 2) {  // x4: two key tiles x two k halves
                uint32_t b[4];
                ldsm_x4(b, &sk[(nt * 8 + (lane / 16) * 8 + (lane % 8)) * P + kk * 16 + ((lane / 8) % 2) * 8]);
                mma16816(sc[nt], qa[kk], b[0], b[1]);
                mma16816(sc[nt + 1], qa[kk], b[2], b[3]);
            }
        }
        __syncthreads();  // every warp is done with K(j)
        if (more) load_tile<D>(sk, kc, table, j0 + kKeys, p_last, g.block, g.n_head_kv, kvh);
        cp_async_commit();
        // Scale (to log2 units), cap, mask; new running max per row.
        float mx_a = m_a, mx_b = m_b;
#pragma unroll
        for (int nt = 0; nt < kKeys / 8; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int j = j0 + nt * 8 + (lane % 4) * 2 + (e % 2);
                const int p = e < 2 ? pa : pb;
                float v = sc[nt][e] * g.scale;
                if (g.softcap > 0.f) v = g.softcap * tanhf(v / g.softcap);
                v *= kLog2e;
                const bool ok = p >= 0 && j <= p && (g.window <= 0 || p - j < g.window);
                v = ok ? v : -FLT_MAX;
                sc[nt][e] = v;
                if (e < 2) mx_a = fmaxf(mx_a, v); else mx_b = fmaxf(mx_b, v);
            }
        mx_a = fmaxf(mx_a, __shfl_xor_sync(0xffffffffu, mx_a, 1));
        mx_a = fmaxf(mx_a, __shfl_xor_sync(0xffffffffu, mx_a, 2));
        mx_b = fmaxf(mx_b, __shfl_xor_sync(0xffffffffu, mx_b, 1));
        mx_b = fmaxf(mx_b, __shfl_xor_sync(0xffffffffu, mx_b, 2));
        const float ca = exp2f(m_a - mx_a), cb = exp2f(m_b - mx_b);
        m_a = mx_a;
        m_b = mx_b;
        float sa = 0.f, sb = 0.f;
        uint32_t pa16[kKeys / 16][4];  // P as A fragments: key tile pairs -> one k16 step
#pragma unroll
        for (int nt = 0; nt < kKeys / 8; ++nt) {
            const float e0 = sc[nt][0] == -FLT_MAX ? 0.f : exp2f(sc[nt][0] - mx_a);
            const float e1 = sc[nt][1] == -FLT_MAX ? 0.f : exp2f(sc[nt][1] - mx_a);
            const float e2 = sc[nt][2] == -FLT_MAX ? 0.f : exp2f(sc[nt][2] - mx_b);
            const float e3 = sc[nt][3] == -FLT_MAX ? 0.f : exp2f(sc[nt][3] - mx_b);
            sa += e0 + e1;
            sb += e2 + e3;
            pa16[nt / 2][(nt % 2) * 2 + 0] = pack_bf16(e0, e1);
            pa16[nt / 2][(nt % 2) * 2 + 1] = pack_bf16(e2, e3);
        }
        l_a = l_a * ca + sa;
        l_b = l_b * cb + sb;
#pragma unroll
        for (int j = 0; j < D / 8; ++j) {
            o[j][0] *= ca; o[j][1] *= ca;
            o[j][2] *= cb; o[j][3] *= cb;
        }
        cp_async_wait_all_but_newest();  // V(j) has landed (K(j+1) may still be in flight)
        __syncthreads();
        // O += P V: k = keys (16 per step), n = head dims (8 per tile); V rows are keys: transpose.
#pragma unroll
        for (int kk = 0; kk < kKeys / 16; ++kk) {
#pragma unroll
            for (int nt = 0; nt < D / 8; nt += 2) {
                uint32_t b[4];
                ldsm_x4_t(b, &sv[(kk * 16 + ((lane / 8) % 2) * 8 + (lane % 8)) * P + nt * 8 + (lane / 16) * 8]);
                mma16816(o[nt], pa16[kk], b[0], b[1]);
                mma16816(o[nt + 1], pa16[kk], b[2], b[3]);
            }
        }
        __syncthreads();  // every warp is done with V(j)
        if (more) load_tile<D>(sv, vc, table, j0 + kKeys, p_last, g.block, g.n_head_kv, kvh);
        cp_async_commit();
    }
    l_a += __shfl_xor_sync(0xffffffffu, l_a, 1);
    l_a += __shfl_xor_sync(0xffffffffu, l_a, 2);
    l_b += __shfl_xor_sync(0xffffffffu, l_b, 1);
    l_b += __shfl_xor_sync(0xffffffffu, l_b, 2);
#pragma unroll
    for (int j = 0; j < D / 8; ++j) {
        const int d = j * 8 + (lane % 4) * 2;
        if (ra < r1) {
            float* out = y + static_cast<int64_t>(ra) * g.y_pitch + static_cast<int64_t>(h) * D + d;
            out[0] = o[j][0] / l_a;
            out[1] = o[j][1] / l_a;
        }
        if (rb < r1) {
            float* out = y + static_cast<int64_t>(rb) * g.y_pitch + static_cast<int64_t>(h) * D + d;
            out[0] = o[j][2] / l_b;
            out[1] = o[j][3] / l_b;
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
    const dim3 grid(static_cast<unsigned>((n + kRows - 1) / kRows + g.n_seq), static_cast<unsigned>(g.n_head));
    auto args = [&](auto kernel) {
        gpu_launch(kernel, grid, kWarpsFa * 32, 0, stream_of(a), static_cast<const float*>(q->data), static_cast<const gpu_bf16*>(kc->data),
                                               static_cast<const gpu_bf16*>(vc->data), static_cast<const int32_t*>(pos->data),
                                               static_cast<const int32_t*>(cu->data), static_cast<const int32_t*>(bt->data),
                                               static_cast<float*>(y->data), g);
        return launched();
    };
    if (head_dim == 128) return args(k_flash<128>);
    if (head_dim == 64) return args(k_flash<64>);
#else
    (void)a; (void)g; (void)n; (void)head_dim;
#endif
    return RAD_E_UNSUPPORTED;
}

}  // namespace gpu
