// k_mma.h: the tensor-core building blocks the attention kernels share (CUDA sm_80 and later):
// mma.m16n8k16 bf16 -> f32, ldmatrix, cp.async, bf16 packing and a one-instruction exp2.
#pragma once
#include <cfloat>

#include "k_common.h"

#if RAD_GPU_CUDA
namespace gpu {
namespace mma {

__device__ __forceinline__ uint32_t pack_bf16(float a, float b) {
    __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&v);
}
// c (16x8, f32) += a (16x16, bf16, row) * b (16x8, bf16, col), one warp.
__device__ __forceinline__ void mma16816(float* c, const uint32_t* a, uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void ldsm_x4(uint32_t* r, const void* p) {
    const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}
__device__ __forceinline__ void ldsm_x4_t(uint32_t* r, const void* p) {
    const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(a));
}
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
    const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
    const int n = valid ? 16 : 0;  // 0: fill the 16 bytes with zeros
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(a), "l"(gmem), "r"(n));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all_but_newest() { asm volatile("cp.async.wait_group 1;\n" ::); }
template <int N>  // until at most the N newest groups are in flight
__device__ __forceinline__ void cp_async_wait_group() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// 2^x in one MUFU instruction (exp2f adds range handling a softmax does not need: its arguments
// are <= 0 and a flush to zero of tiny results is what it wants).
__device__ __forceinline__ float fast_exp2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

constexpr float kLog2e = 1.4426950408889634f;

// The flash-style online softmax over one warp's S fragment: NT key tiles of 8 (C fragments of
// m16n8), rows a = lane / 4 and b = a + 8, running maxima in log2 units, this thread's share of
// the running sums, and O's C fragments (DT tiles of 8 dims).

// The max of a row over the 4 lanes that hold it.
__device__ __forceinline__ float quad_max(float x) {
    x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
    return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
    x += __shfl_xor_sync(0xffffffffu, x, 1);
    return x + __shfl_xor_sync(0xffffffffu, x, 2);
}
// A raw score in log2 units: capped (softcap > 0: softcap * tanh(s * scale / softcap)) or scaled.
__device__ __forceinline__ float score_log2(float s, float scale, float softcap, float scale_log2) {
    return softcap > 0.f ? softcap * tanhf(s * scale / softcap) * kLog2e : s * scale_log2;
}
// Scores already in log2 units, masked ones exactly -FLT_MAX, and (mx_a, mx_b) this thread's
// maxima of its scores and the running ones: completes the maxima over the row's lanes, returns
// the factors (ca, cb) the old state scales by, and turns the scores into probabilities packed as
// A fragments (one k16 step per two key tiles), summed into sa / sb. A masked score contributes
// 0 even while the row's max is still -FLT_MAX (no key seen yet), where exp2 of the difference
// would be 1.
template <int NT>
__device__ __forceinline__ void masked_probs(const float (&sc)[NT][4], float mx_a, float mx_b, float& m_a, float& m_b, float& ca, float& cb,
                                             float& sa, float& sb, uint32_t (&pa)[NT / 2][4]) {
    mx_a = quad_max(mx_a);
    mx_b = quad_max(mx_b);
    ca = fast_exp2(m_a - mx_a);
    cb = fast_exp2(m_b - mx_b);
    m_a = mx_a;
    m_b = mx_b;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        const float e0 = sc[nt][0] == -FLT_MAX ? 0.f : fast_exp2(sc[nt][0] - mx_a);
        const float e1 = sc[nt][1] == -FLT_MAX ? 0.f : fast_exp2(sc[nt][1] - mx_a);
        const float e2 = sc[nt][2] == -FLT_MAX ? 0.f : fast_exp2(sc[nt][2] - mx_b);
        const float e3 = sc[nt][3] == -FLT_MAX ? 0.f : fast_exp2(sc[nt][3] - mx_b);
        sa += e0 + e1;
        sb += e2 + e3;
        pa[nt / 2][(nt % 2) * 2 + 0] = pack_bf16(e0, e1);
        pa[nt / 2][(nt % 2) * 2 + 1] = pack_bf16(e2, e3);
    }
}
// O's C fragments scaled by the old state's factors (ca, cb) before a tile's P V is added.
template <int DT>
__device__ __forceinline__ void rescale_o(float (&o)[DT][4], float ca, float cb) {
#pragma unroll
    for (int j = 0; j < DT; ++j) {
        o[j][0] *= ca;
        o[j][1] *= ca;
        o[j][2] *= cb;
        o[j][3] *= cb;
    }
}

}  // namespace mma
}  // namespace gpu
#endif
