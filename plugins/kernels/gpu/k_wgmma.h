// k_wgmma.h: Hopper's warpgroup matrix multiply (wgmma.mma_async, sm_90a only) as the attention
// kernels use it: A (bf16) from registers in the m16n8k16 A-fragment layout of each warp's 16 rows,
// B (bf16) from shared memory through a matrix descriptor, f32 accumulators in the m16n8 C-fragment
// layout per 8 columns. So a kernel written for mma.sync keeps its fragments and softmax, and the
// tensor cores read each B tile once per warpgroup of 4 warps instead of once per warp through
// ldmatrix. Guarded by __CUDA_ARCH_FEAT_SM90_ALL at the use sites; the wrappers themselves only
// compile where the arch-specific features are on (nvcc -gencode arch=compute_90a).
//
// Shared-memory layout ("no swizzle"): the unit is the core matrix, 8 rows of 16 bytes stored as
// 128 contiguous bytes. A tile of rows x D bf16 (rows = keys, D = head dims) keeps row r's 8-dim
// chunk c at (r / 8) * (D / 8) * 128 + c * 128 + (r % 8) * 16 bytes (tile_chunk_offset), one
// layout for K and V: as B of S = Q K^T it is K-major (k = dims, core matrices 128 bytes apart
// along k, (D / 8) * 128 along the keys); as B of O = P V it is MN-major (n = dims 128 bytes apart,
// k = keys (D / 8) * 128 apart), read with the transpose bit. bench/gpu/wgmma_probe.cu checks these
// encodings against a host product on the card.
#pragma once
#include <cstdint>

namespace gpu {
namespace wgmma {

// Byte offset of row r's 8-element chunk c in a tile of D columns (see the layout above).
template <int D>
__host__ __device__ constexpr uint32_t tile_chunk_offset(int r, int c) {
    return static_cast<uint32_t>((r / 8) * (D / 8) * 128 + c * 128 + (r % 8) * 16);
}

// The descriptor: start address, leading-dimension byte offset, stride-dimension byte offset
// (each >> 4, 14 bits), base offset 0, swizzle mode 0 (none).
__device__ __forceinline__ uint64_t smem_desc(const void* p, uint32_t lbo, uint32_t sbo) {
    const uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(p));
    return static_cast<uint64_t>((a >> 4) & 0x3FFF) | static_cast<uint64_t>((lbo >> 4) & 0x3FFF) << 16 |
           static_cast<uint64_t>((sbo >> 4) & 0x3FFF) << 32;
}

// The tile as B of S = Q K^T (K-major) for the k-step of dims 16kk..: two core matrices 128 bytes
// apart along the dims, (D / 8) * 128 apart along the keys.
template <int D>
__device__ __forceinline__ uint64_t tile_desc_k_major(const void* tile, int kk) {
    return smem_desc(static_cast<const char*>(tile) + kk * 2 * 128, 128, (D / 8) * 128);
}
// The tile as B of O = P V (MN-major, transpose bit) for the k-step of keys 16kk..: two row groups
// (D / 8) * 128 apart along the keys, dims 128 apart.
template <int D>
__device__ __forceinline__ uint64_t tile_desc_mn_major(const void* tile, int kk) {
    return smem_desc(static_cast<const char*>(tile) + kk * 2 * (D / 8) * 128, (D / 8) * 128, 128);
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Orders this thread's earlier register writes (accumulators, A fragments) before the next wgmma.
__device__ __forceinline__ void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed groups are in flight.
template <int N>
__device__ __forceinline__ void wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Shared-memory writes by ordinary stores or cp.async become visible to the async proxy that
// wgmma reads through (each writing thread, before the barrier that publishes the tile).
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Keeps the compiler from moving reads of an accumulator above the wait that completes it.
template <int NT>
__device__ __forceinline__ void fence_operands(float (&d)[NT][4]) {
#pragma unroll
    for (int i = 0; i < NT; ++i) asm volatile("" : "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3])::"memory");
}

// One chain of wgmma issued by `issue`, committed and waited for: the fence orders the registers
// written since the last chain (accumulators, A fragments) before it, and the accumulators d are
// pinned after the wait.
template <int NT, class Issue>
__device__ __forceinline__ void chain_and_wait(float (&d)[NT][4], Issue&& issue) {
    fence();
    issue();
    commit();
    wait<0>();
    fence_operands(d);
}

// Generated wrappers (accumulate = 0: d = a * B; 1: d += a * B).
// d (64 x 64, f32) (+)= a (64 x 16, bf16, this warp's 16 rows in registers) * B (64 columns of 16 k, smem descriptor).
template <int TRANS_B>
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[8][4], const uint32_t (&a)[4], uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %36, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
        "{%32,%33,%34,%35}, %37, p, 1, 1, %38;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
          "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
          "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
          "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(accumulate), "l"(desc_b), "n"(TRANS_B));
}

// d (64 x 128, f32) (+)= a (64 x 16, bf16, this warp's 16 rows in registers) * B (128 columns of 16 k, smem descriptor).
template <int TRANS_B>
__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[16][4], const uint32_t (&a)[4], uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %68, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
        "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,%32,%33,%"
        "34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "
        "{%64,%65,%66,%67}, %69, p, 1, 1, %70;\n}\n"
        : "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]),
          "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]),
          "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]),
          "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3]),
          "+f"(d[8][0]), "+f"(d[8][1]), "+f"(d[8][2]), "+f"(d[8][3]), "+f"(d[9][0]), "+f"(d[9][1]), "+f"(d[9][2]), "+f"(d[9][3]),
          "+f"(d[10][0]), "+f"(d[10][1]), "+f"(d[10][2]), "+f"(d[10][3]), "+f"(d[11][0]), "+f"(d[11][1]), "+f"(d[11][2]), "+f"(d[11][3]),
          "+f"(d[12][0]), "+f"(d[12][1]), "+f"(d[12][2]), "+f"(d[12][3]), "+f"(d[13][0]), "+f"(d[13][1]), "+f"(d[13][2]), "+f"(d[13][3]),
          "+f"(d[14][0]), "+f"(d[14][1]), "+f"(d[14][2]), "+f"(d[14][3]), "+f"(d[15][0]), "+f"(d[15][1]), "+f"(d[15][2]), "+f"(d[15][3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(accumulate), "l"(desc_b), "n"(TRANS_B));
}
#endif

}  // namespace wgmma
}  // namespace gpu
