// wgmma_probe.cu: checks on the card that libgpu's wgmma wrappers and shared-memory descriptors
// (plugins/kernels/gpu/k_wgmma.h) compute what the attention kernels expect, against a product on
// the host: S = A (64 x 128) . T^T (T a 64 x 128 tile, K-major B) and O = P (64 x 64) . T (the
// same tile as MN-major B, transposed read), for both assignments of the two core-matrix strides
// to the descriptor's leading / stride fields. Prints one line per case and exits non-zero when
// the encoding k_wgmma.h documents fails.
//   nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a -o wgmma_probe bench/gpu/wgmma_probe.cu
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "../../plugins/kernels/gpu/k_wgmma.h"

namespace {
constexpr int D = 128, ROWS = 64;
using gpu::wgmma::tile_chunk_offset;

__device__ uint32_t pack2(const __nv_bfloat16* p) {
    __nv_bfloat162 v{p[0], p[1]};
    return *reinterpret_cast<uint32_t*>(&v);
}

// mode 0: S = A . T^T over D (8 k-steps, m64n64); mode 1: O = A . T over the 64 rows (4 k-steps,
// m64n128). lbo = 0: the descriptors the attention kernel builds (tile_desc_k_major / _mn_major).
__global__ void probe(const __nv_bfloat16* a, int a_cols, const __nv_bfloat16* t, float* out, int mode, uint32_t lbo, uint32_t sbo) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
    __shared__ __align__(128) unsigned char tile[ROWS * D * 2];
    for (int e = threadIdx.x; e < ROWS * D / 8; e += blockDim.x) {
        const int r = e / (D / 8), c = e % (D / 8);
        *reinterpret_cast<uint4*>(tile + tile_chunk_offset<D>(r, c)) = *reinterpret_cast<const uint4*>(t + r * D + c * 8);
    }
    gpu::wgmma::fence_proxy_async();
    __syncthreads();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
    const int row = warp * 16 + g;
    auto frag = [&](int kk, uint32_t(&f)[4]) {
        f[0] = pack2(a + row * a_cols + kk * 16 + 2 * q);
        f[1] = pack2(a + (row + 8) * a_cols + kk * 16 + 2 * q);
        f[2] = pack2(a + row * a_cols + kk * 16 + 2 * q + 8);
        f[3] = pack2(a + (row + 8) * a_cols + kk * 16 + 2 * q + 8);
    };
    if (mode == 0) {
        float d[8][4];
        uint32_t f[D / 16][4];  // every A fragment before the first wgmma, as the kernels hold Q
        for (int kk = 0; kk < D / 16; ++kk) frag(kk, f[kk]);
        gpu::wgmma::fence();
#pragma unroll
        for (int kk = 0; kk < D / 16; ++kk)  // k-step kk: dims 16kk.. = chunks 2kk, 2kk+1
            gpu::wgmma::wgmma_m64n64k16<0>(
                d, f[kk], lbo ? gpu::wgmma::smem_desc(tile + kk * 2 * 128, lbo, sbo) : gpu::wgmma::tile_desc_k_major<D>(tile, kk), kk > 0);
        gpu::wgmma::commit();
        gpu::wgmma::wait<0>();
        gpu::wgmma::fence_operands(d);
        for (int j = 0; j < 8; ++j) {
            out[row * 64 + j * 8 + 2 * q] = d[j][0];
            out[row * 64 + j * 8 + 2 * q + 1] = d[j][1];
            out[(row + 8) * 64 + j * 8 + 2 * q] = d[j][2];
            out[(row + 8) * 64 + j * 8 + 2 * q + 1] = d[j][3];
        }
    } else {
        float d[16][4];
        uint32_t f[ROWS / 16][4];
        for (int kk = 0; kk < ROWS / 16; ++kk) frag(kk, f[kk]);
        gpu::wgmma::fence();
#pragma unroll
        for (int kk = 0; kk < ROWS / 16; ++kk)  // k-step kk: rows (keys) 16kk.. = row groups 2kk, 2kk+1
            gpu::wgmma::wgmma_m64n128k16<1>(
                d, f[kk],
                lbo ? gpu::wgmma::smem_desc(tile + kk * 2 * (D / 8) * 128, lbo, sbo) : gpu::wgmma::tile_desc_mn_major<D>(tile, kk), kk > 0);
        gpu::wgmma::commit();
        gpu::wgmma::wait<0>();
        gpu::wgmma::fence_operands(d);
        for (int j = 0; j < 16; ++j) {
            out[row * D + j * 8 + 2 * q] = d[j][0];
            out[row * D + j * 8 + 2 * q + 1] = d[j][1];
            out[(row + 8) * D + j * 8 + 2 * q] = d[j][2];
            out[(row + 8) * D + j * 8 + 2 * q + 1] = d[j][3];
        }
    }
#else
    (void)a;
    (void)a_cols;
    (void)t;
    (void)out;
    (void)mode;
    (void)lbo;
    (void)sbo;
#endif
}

float bf(float x) { return __bfloat162float(__float2bfloat16(x)); }
}  // namespace

int main() {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1.f, 1.f);
    std::vector<float> a(64 * D), t(ROWS * D);
    for (auto& v : a) v = bf(u(rng));
    for (auto& v : t) v = bf(u(rng));
    std::vector<__nv_bfloat16> ah(a.size()), th(t.size());
    for (size_t i = 0; i < a.size(); ++i) ah[i] = __float2bfloat16(a[i]);
    for (size_t i = 0; i < t.size(); ++i) th[i] = __float2bfloat16(t[i]);
    __nv_bfloat16 *ad, *td;
    float* od;
    cudaMalloc(&ad, ah.size() * 2);
    cudaMalloc(&td, th.size() * 2);
    cudaMalloc(&od, 64 * D * 4);
    cudaMemcpy(ad, ah.data(), ah.size() * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(td, th.data(), th.size() * 2, cudaMemcpyHostToDevice);
    const uint32_t along_dims = 128, along_rows = (D / 8) * 128;
    struct Case {
        const char* name;
        int mode;
        uint32_t lbo, sbo;
        bool documented;
    };
    const Case cases[] = {
        {"S=A.T^T  K-major  tile_desc_k_major (the kernel's)", 0, 0, 0, true},
        {"S=A.T^T  K-major  lbo=dims(128) sbo=rows(2048)", 0, along_dims, along_rows, true},
        {"S=A.T^T  K-major  lbo=rows(2048) sbo=dims(128)", 0, along_rows, along_dims, false},
        {"O=P.T    MN-major tile_desc_mn_major (the kernel's)", 1, 0, 0, true},
        {"O=P.T    MN-major lbo=rows(2048) sbo=dims(128)", 1, along_rows, along_dims, true},
        {"O=P.T    MN-major lbo=dims(128) sbo=rows(2048)", 1, along_dims, along_rows, false},
    };
    int bad = 0;
    for (const Case& c : cases) {
        const int n = c.mode == 0 ? 64 : D, kdim = c.mode == 0 ? D : ROWS;
        cudaMemset(od, 0, 64 * D * 4);
        probe<<<1, 128>>>(ad, c.mode == 0 ? D : ROWS, td, od, c.mode, c.lbo, c.sbo);
        const cudaError_t e = cudaDeviceSynchronize();
        std::vector<float> o(64 * D);
        cudaMemcpy(o.data(), od, o.size() * 4, cudaMemcpyDeviceToHost);
        double max_err = 0, max_ref = 0;
        for (int m = 0; m < 64; ++m)
            for (int j = 0; j < n; ++j) {
                double r = 0;
                for (int k = 0; k < kdim; ++k)
                    r += static_cast<double>(a[m * (c.mode == 0 ? D : ROWS) + k]) * (c.mode == 0 ? t[j * D + k] : t[k * D + j]);
                max_err = std::fmax(max_err, std::fabs(r - o[m * n + j]));
                max_ref = std::fmax(max_ref, std::fabs(r));
            }
        const bool ok = e == cudaSuccess && max_err <= 1e-3 * max_ref;
        std::printf("wgmma_probe %-50s %s  max_err %.3g of %.3g%s\n", c.name, ok ? "MATCH" : "differs", max_err, max_ref,
                    e == cudaSuccess ? "" : cudaGetErrorString(e));
        if (c.documented && !ok) ++bad;
    }
    std::printf("wgmma_probe: %s\n", bad ? "FAILED (the documented encoding does not match)" : "documented encodings match");
    return bad ? 1 : 0;
}
