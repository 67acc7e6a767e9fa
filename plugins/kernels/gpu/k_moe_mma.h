// k_moe_mma.h: moe_mlp's grouped tiles on the tensor cores (CUDA, bf16 weights): a tile is
// kMmaBM slots of one expert's rows (sorted by expert) against kMmaBN outputs, mma.m16n8k16 with
// f32 accumulation. The A rows (x, or the activation) are narrowed to bf16 as they are staged,
// as gemm_blas narrows x for cuBLASLt; the weights arrive by cp.async two k-steps ahead.
#pragma once
#include "k_mma.h"
#include "k_paged.h"
#include "k_vec.h"

#if RAD_GPU_CUDA
namespace gpu {
namespace moe {

constexpr int kMmaBM = 64, kMmaBN = 64, kMmaBK = 32, kMmaStages = 3;

// One tile (blockIdx.x: the tile, in the experts' order; blockIdx.y: kMmaBN outputs from n0). GLU:
// A is x (slot's row sorted[slot] / k), the weights the expert's gate rows and their up rows
// (2 kMmaBN weight rows a tile), act[slot, n] = silu(g) * u. Otherwise A is act (row = slot), the
// weights the expert's down rows, out[pair, n] = acc * w[pair]. 8 warps, 2 along M by 4 along N:
// a warp owns 32 rows by 16 outputs (twice for GLU). K % 8 == 0, rows 16-byte aligned.
template <bool GLU>
__global__ void __launch_bounds__(256)
    k_moe_group_mma(const float* __restrict__ a, int64_t pa, const gpu_bf16* __restrict__ wbase, const int* start, const int* tiles,
                    const int* sorted, const float* wt, int64_t pw, float* __restrict__ y, int64_t K, int64_t N, int64_t F, int E, int k) {
    using namespace mma;
    constexpr int BM = kMmaBM, BN = kMmaBN, BK = kMmaBK, ST = kMmaStages;
    constexpr int LD = BK + 8;             // 80-byte rows: ldmatrix's eight row addresses hit distinct banks
    constexpr int WR = GLU ? 2 * BN : BN;  // weight rows a tile
    constexpr int CH = BK / 8;             // 16-byte chunks a row a k-step
    __shared__ __align__(16) gpu_bf16 as[2][BM][LD];
    __shared__ __align__(16) gpu_bf16 bs[ST][WR][LD];
    gpu_grid_wait();
    gpu_grid_release();
    const int b = blockIdx.x;
    if (b >= tiles[E]) return;  // the grid is sized for the worst routing
    const int e = seq_of_row(tiles, E, b);
    const int m0 = start[e] + (b - tiles[e]) * BM, rows = min(BM, start[e + 1] - m0);
    const int64_t n0 = static_cast<int64_t>(blockIdx.y) * BN;
    const gpu_bf16* wexp = wbase + (GLU ? static_cast<int64_t>(e) * 2 * F : static_cast<int64_t>(e) * N) * K;
    const int tid = threadIdx.x, warp = tid / kWarpSize, lane = tid % kWarpSize;

    // A: thread tid stages row tid / 4, eight k values from (tid % 4) * 8, through registers.
    const int ar = tid / 4, ac = (tid % 4) * 8;
    const float* arow = nullptr;
    if (ar < rows) {
        const int64_t slot = m0 + ar;
        arow = a + (GLU ? sorted[slot] / k : slot) * pa;
    }
    float4 av[2];
    auto load_a = [&](int64_t k0) {
        const bool in = arow && k0 + ac < K;
        av[0] = in ? __ldg(reinterpret_cast<const float4*>(arow + k0 + ac)) : make_float4(0.f, 0.f, 0.f, 0.f);
        av[1] = in ? __ldg(reinterpret_cast<const float4*>(arow + k0 + ac + 4)) : make_float4(0.f, 0.f, 0.f, 0.f);
    };
    auto store_a = [&](int buf) {
        const uint4 v =
            make_uint4(pack_bf16(av[0].x, av[0].y), pack_bf16(av[0].z, av[0].w), pack_bf16(av[1].x, av[1].y), pack_bf16(av[1].z, av[1].w));
        *reinterpret_cast<uint4*>(&as[buf][ar][ac]) = v;
    };
    // The weights: WR rows of CH chunks, zeros past N or K.
    auto load_b = [&](int stage, int64_t k0) {
#pragma unroll
        for (int i = tid; i < WR * CH; i += 256) {
            const int r = i / CH, c = (i % CH) * 8;
            const int64_t n = n0 + (GLU ? r % BN : r);
            const bool in = n < N && k0 + c < K;
            const int64_t wrow = GLU && r >= BN ? F + n : n;
            cp_async16(&bs[stage][r][c], in ? wexp + wrow * K + k0 + c : wexp, in);
        }
    };

    const int KT = static_cast<int>((K + BK - 1) / BK);
#pragma unroll
    for (int s = 0; s < ST - 1; ++s) {
        if (s < KT) load_b(s, static_cast<int64_t>(s) * BK);
        cp_async_commit();
    }
    load_a(0);
    store_a(0);
    const int wm = warp / 4, wn = warp % 4;
    float acc[GLU ? 2 : 1][2][2][4] = {};  // [gate, up][m tile][n tile][fragment]
    for (int kt = 0; kt < KT; ++kt) {
        if (kt + 1 < KT) load_a(static_cast<int64_t>(kt + 1) * BK);  // in flight while this step multiplies
        if (kt + ST - 1 < KT) load_b((kt + ST - 1) % ST, static_cast<int64_t>(kt + ST - 1) * BK);
        cp_async_commit();
        cp_async_wait_group<ST - 1>();  // step kt's weights landed
        __syncthreads();
        const int sa = kt % 2, sb = kt % ST;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            uint32_t af[2][4];
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) ldsm_x4(af[mt], &as[sa][wm * 32 + mt * 16 + (lane % 16)][kk + (lane / 16) * 8]);
#pragma unroll
            for (int h = 0; h < (GLU ? 2 : 1); ++h) {
                uint32_t bf[4];  // n tile 0: bf[0], bf[1]; n tile 1: bf[2], bf[3]
                ldsm_x4(bf, &bs[sb][h * BN + wn * 16 + (lane / 16) * 8 + (lane % 8)][kk + ((lane / 8) % 2) * 8]);
#pragma unroll
                for (int mt = 0; mt < 2; ++mt)
#pragma unroll
                    for (int nt = 0; nt < 2; ++nt) mma16816(acc[h][mt][nt], af[mt], bf[2 * nt], bf[2 * nt + 1]);
            }
        }
        if (kt + 1 < KT) store_a((kt + 1) % 2);
        __syncthreads();
    }
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {  // fragment rows lane / 4 and lane / 4 + 8
            const int r = wm * 32 + mt * 16 + lane / 4 + hr * 8;
            if (r >= rows) continue;
            const int64_t slot = m0 + r;
            const int64_t pair = GLU ? 0 : sorted[slot];
            const float w = GLU ? 0.f : wt[(pair / k) * pw + pair % k];
#pragma unroll
            for (int nt = 0; nt < 2; ++nt)
#pragma unroll
                for (int q = 0; q < 2; ++q) {
                    const int64_t n = n0 + wn * 16 + nt * 8 + 2 * (lane % 4) + q;
                    if (n >= N) continue;
                    const float v = acc[0][mt][nt][2 * hr + q];
                    if constexpr (GLU)
                        y[slot * N + n] = silu(v) * acc[GLU ? 1 : 0][mt][nt][2 * hr + q];
                    else
                        y[pair * N + n] = v * w;
                }
        }
}

}  // namespace moe
}  // namespace gpu
#endif
