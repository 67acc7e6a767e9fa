// k_gemm_q.cu: gemm_q on the card (docs/OPS.md): y = x . w'^T (+ bias), w' = (code - zero) * scale
// decoded from the planes as the container stores them: codes [N, K] of i8 / u8 / i4 / u4 /
// fp8_e4m3, one scale (f32 / f16 / bf16) per block of group_rows x group, an optional zero point
// of the codes' dtype per block, and an optional minimum m (operand 6, a GGUF K-quant's offset) of
// the scale's dtype and grouping: w' = (code - zero) * scale - m.
//
// Few rows (decode, M <= 8): the codes stream once, a block per 4 weight rows whose threads split
// K and sum through shared memory (k_gemm.cu's block gemv for bf16). One or two x rows: 16 bytes of
// a row's codes (16 or 32) a thread step; three to eight: units of 8 codes, several steps in flight
// a thread, each x value loaded once for the block's 4 weight rows. A chunk or unit never straddles
// a group (the vector paths need whole chunks or units a group), so each one's products are summed,
// then scaled once (a minimum, then, times its sum of x). A step's scale, zero point and minimum
// load with its codes, a step ahead, as raw bits (GroupBits): loaded where they are used, each step
// waited for a second round trip behind its codes (H100, gate/up at M = 1: 12-28% slower).
// A weight with the perm transform (operand 7) reads x gathered into the stored column order.
// Integer codes widen without an int-to-float conversion, whose quarter rate would cap a 4-bit
// stream below memory speed: a code ORed into the low bits of 2^23's mantissa is the float 2^23 + c,
// and subtracting the constant 2^23 + z leaves c - z exactly (i8 and i4 first flip their sign bit,
// which adds 128 or 8 that the constant takes back). fp8 pairs convert in one instruction to f16.
// Many rows: weight rows dequantised to bf16 in slabs in scratch, each multiplied by k_blas.h's
// bf16 product (cuBLASLt on the card, x narrowed to bf16 as gemm's many rows narrow it).
// Other shapes (a group not a whole number of chunks, unaligned rows): a warp per output, each code
// decoded alone.
#include <radiance/rad_decode.h>

#include <algorithm>
#include <type_traits>

#include "k_blas.h"
#include "k_common.h"
#include "k_vec.h"

#if RAD_GPU_CUDA
#include <cuda_fp8.h>
#endif

namespace gpu {
namespace {

enum CodeKind { kI8, kU8, kI4, kU4, kF8 };

// Codes in one 16-byte chunk.
template <int C>
constexpr int kPerChunk = (C == kI4 || C == kU4) ? 32 : 16;

constexpr float kTwo23 = 8388608.0f;

// The planes and grouping of one launch (plain values, passed by value to the kernels).
struct QPlanes {
    const uint8_t* w;  // codes, wpitch bytes a row
    int64_t wpitch;
    const void* scale;  // [ceil(N / group_rows), scols] of sdt
    int sdt;
    int64_t scols;
    const uint8_t* zero;  // zero points of the codes' dtype, zpitch bytes a row; nullptr: none
    int64_t zpitch;
    int64_t group, group_rows;
    const void* bias;  // [N] of bdt, or nullptr
    int bdt;
    const void* mins;  // the minima, the scale's dtype and shape; nullptr: none
};

__device__ __forceinline__ float load_float(const void* p, int dt, int64_t i) {
    if (dt == RAD_F32) return static_cast<const float*>(p)[i];
    const unsigned short b = static_cast<const unsigned short*>(p)[i];
    if (dt == RAD_BF16) return __uint_as_float(static_cast<uint32_t>(b) << 16);
    union {
        unsigned short u;
        gpu_f16 h;
    } v;
    v.u = b;
    return gpu_to_f32(v.h);
}

// e4m3fn's value, decoded alone (the scalar path; the chunk path converts pairs in hardware).
__device__ __forceinline__ float e4m3_value(uint32_t b) {
    const uint32_t e = (b >> 3) & 0xF, m = b & 7;
    if (e == 0xF && m == 7) return __uint_as_float(0x7fc00000u);
    const float mag = e ? ldexpf(1.0f + static_cast<float>(m) / 8.0f, static_cast<int>(e) - 7) : ldexpf(static_cast<float>(m), -9);
    return (b & 0x80) ? -mag : mag;
}

// Element j of a plane row of qtype qt, as the core's decoder reads it (rad_decode.h).
__device__ __forceinline__ float code_value(int qt, const uint8_t* row, int64_t j) {
    switch (qt) {
    case RAD_I8: return static_cast<float>(static_cast<int8_t>(row[j]));
    case RAD_U8: return static_cast<float>(row[j]);
    case RAD_FP8_E4M3: return e4m3_value(row[j]);
    case RAD_I4:
    case RAD_U4: {
        const int v = (row[j / 2] >> (4 * (j & 1))) & 0xF;
        return static_cast<float>(qt == RAD_I4 && v >= 8 ? v - 16 : v);
    }
    default: return __uint_as_float(0x7fc00000u);
    }
}

// A block's scale, zero point and minimum as the gemvs load them: raw bits, decoded only where they
// are used. Their loads then go out with the codes' a step ahead; decoding at the load (a shift, a
// nibble pick) would stall there and queue a second round trip behind every step's codes.
struct GroupBits {
    uint32_t scale, zero, min;  // zero: the byte holding the block's zero point (its nibble for 4-bit codes)
};

__device__ __forceinline__ uint32_t load_bits(const void* p, int dt, int64_t i) {
    if (dt == RAD_F32) return __ldg(static_cast<const unsigned int*>(p) + i);
    return __ldg(static_cast<const unsigned short*>(p) + i);
}

__device__ __forceinline__ float bits_value(uint32_t b, int dt) {
    if (dt == RAD_F32) return __uint_as_float(b);
    if (dt == RAD_BF16) return __uint_as_float(b << 16);
    union {
        unsigned short u;
        gpu_f16 h;
    } v;
    v.u = static_cast<unsigned short>(b);
    return gpu_to_f32(v.h);
}

template <int C>
__device__ __forceinline__ uint32_t load_zero_byte(const QPlanes& q, int64_t srow, int64_t g) {
    constexpr bool nibbles = C == kI4 || C == kU4;
    return __ldg(q.zero + srow * q.zpitch + (nibbles ? g / 2 : g));
}

template <int C>
__device__ __forceinline__ GroupBits load_group(const QPlanes& q, int64_t srow, int64_t g) {
    const int64_t i = srow * q.scols + g;
    return GroupBits{load_bits(q.scale, q.sdt, i), q.zero ? load_zero_byte<C>(q, srow, g) : 0u, q.mins ? load_bits(q.mins, q.sdt, i) : 0u};
}

// The constant a chunk's widened codes (widen below) lose to become c - z: the biases of the
// 2^23 trick and the block's zero point, from its loaded bits (the zero point picked from its byte).
template <int C>
__device__ __forceinline__ float base_of(const QPlanes& q, const GroupBits& b, int64_t g) {
    float z = 0.0f;
    if (q.zero) {
        uint32_t v = b.zero;
        if constexpr (C == kI4 || C == kU4) v = (v >> (4 * (g & 1))) & 0xFu;
        if constexpr (C == kI8) z = static_cast<float>(static_cast<int8_t>(v));
        else if constexpr (C == kI4) z = static_cast<float>(v >= 8 ? static_cast<int>(v) - 16 : static_cast<int>(v));
        else if constexpr (C == kF8) z = e4m3_value(v);
        else z = static_cast<float>(v);
    }
    if constexpr (C == kF8) return z;
    return kTwo23 + (C == kI8 ? 128.0f : C == kI4 ? 8.0f : 0.0f) + z;
}

// A chunk's or unit's block column: a shift where a group holds a power of two of them (every
// recipe's and import's), else a 32-bit division; never the 64-bit one, a long software routine on
// the card. (Indices fit: a row has fewer than 2^31 codes.)
struct GroupOf {
    uint32_t per;
    int shift;  // -1: not a power of two
    __device__ int64_t operator()(int64_t c) const {
        const auto u = static_cast<uint32_t>(c);
        return shift >= 0 ? (u >> shift) : u / per;
    }
};

__device__ __forceinline__ GroupOf group_of_units(int64_t per_group) {
    const auto per = static_cast<uint32_t>(per_group);
    return GroupOf{per, (per & (per - 1)) == 0 ? static_cast<int>(__ffs(static_cast<int>(per))) - 1 : -1};
}

// A byte of w at the bottom of 2^23's mantissa: the float 2^23 + byte.
__device__ __forceinline__ float magic_byte(uint32_t w, int i) {
#if RAD_GPU_CUDA
    return __uint_as_float(__byte_perm(w, 0x4B000000u, 0x7540u + static_cast<unsigned>(i)));
#else
    return __uint_as_float(((w >> (8 * i)) & 0xFFu) | 0x4B000000u);
#endif
}

// The 16 or 32 codes of a chunk as floats, in order: integer codes as 2^23 + their biased value,
// fp8 codes as their values.
template <int C>
__device__ __forceinline__ void widen(const uint4& raw, float (&out)[kPerChunk<C>]) {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        uint32_t w = words[i];
        if constexpr (C == kI8 || C == kU8) {
            if constexpr (C == kI8) w ^= 0x80808080u;
#pragma unroll
            for (int b = 0; b < 4; ++b) out[4 * i + b] = magic_byte(w, b);
        } else if constexpr (C == kI4 || C == kU4) {
            if constexpr (C == kI4) w ^= 0x88888888u;
            const uint32_t lo = w & 0x0F0F0F0Fu, hi = (w >> 4) & 0x0F0F0F0Fu;  // nibbles 0,2,4,6 and 1,3,5,7
#pragma unroll
            for (int b = 0; b < 4; ++b) {
                out[8 * i + 2 * b] = magic_byte(lo, b);
                out[8 * i + 2 * b + 1] = magic_byte(hi, b);
            }
        } else {
#if RAD_GPU_CUDA
#pragma unroll
            for (int p = 0; p < 2; ++p) {
                const __half2_raw h = __nv_cvt_fp8x2_to_halfraw2(static_cast<__nv_fp8x2_storage_t>(w >> (16 * p)), __NV_E4M3);
                __half2 hv;
                hv = h;
                const float2 f = __half22float2(hv);
                out[4 * i + 2 * p] = f.x;
                out[4 * i + 2 * p + 1] = f.y;
            }
#else
#pragma unroll
            for (int b = 0; b < 4; ++b) out[4 * i + b] = e4m3_value((w >> (8 * b)) & 0xFFu);
#endif
        }
    }
}

constexpr int kThreads = 256, kRows = 4;
// Blocks a multiprocessor must fit at once: caps the gemvs' registers (their steps in flight).
#ifndef RADIANCE_GPU_GEMVQ_MINB
#define RADIANCE_GPU_GEMVQ_MINB 2
#endif
constexpr int kMinBlocks = RADIANCE_GPU_GEMVQ_MINB;

// A gemv block's epilogue: each warp's partial sums through shared memory, added in warp order,
// plus the bias, into the block's R columns of each of the M rows of y.
template <int M, int R>
__device__ __forceinline__ void store_block_sums(const float (&acc)[M][R], const QPlanes& q, float* y, int64_t py, int64_t n0, int64_t N) {
    __shared__ float part[kThreads / kWarpSize][M * R];
    const int T = static_cast<int>(blockDim.x);
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize, warps = T / kWarpSize;
    store_warp_sums<M, R>(acc, part, warp, lane);
    __syncthreads();
    for (int o = threadIdx.x; o < M * R; o += T) {
        const int m = o / R, r = o % R;
        if (n0 + r >= N) continue;
        float v = 0.0f;
        for (int i = 0; i < warps; ++i) v += part[i][o];
        y[m * py + n0 + r] = q.bias ? v + load_float(q.bias, q.bdt, n0 + r) : v;
    }
}

// One or two rows of x against kRows weight rows a block, 16 bytes of codes (16 or 32) a thread
// step; the block's threads split the row's chunks (blockDim.x of them, a multiple of 32, at most
// kThreads). For one row this beats k_gemv_q's 8-code units (H100, rad-kbench, gate/up 28672 x
// 4096: i8 95.7 us against 112.0, u4 + zero 89.6 against 122.9); from a few rows on the units win (M = 8:
// i8 280 us against 384, u4 + zero 188 against 565, Q4_K's u4 + min 162 against 851), since
// each x value is then loaded once a unit and x row rather than once a weight row.
template <int C, int M>
__global__ void __launch_bounds__(kThreads, kMinBlocks) k_gemv_q16(const float* __restrict__ x, int64_t px, QPlanes q, float* __restrict__ y, int64_t py,
                                                     int64_t N, int64_t K) {
    constexpr int P = kPerChunk<C>, R = kRows;
    const int T = static_cast<int>(blockDim.x);
    const int64_t n0 = static_cast<int64_t>(blockIdx.x) * R, chunks = K / P;
    const GroupOf group_of = group_of_units(q.group / P);
    const uint4* wrow[R];
    int64_t srow[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int64_t row = min(n0 + r, N - 1);
        wrow[r] = reinterpret_cast<const uint4*>(q.w + row * q.wpitch);
        srow[r] = row / q.group_rows;
    }
    // Codes and scales are no earlier kernel's output: the first step's loads go out before the wait.
    int64_t c = threadIdx.x;
    uint4 cur[R];
    GroupBits gcur[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        cur[r] = c < chunks ? __ldg(wrow[r] + c) : make_uint4(0, 0, 0, 0);
        gcur[r] = c < chunks ? load_group<C>(q, srow[r], group_of(c)) : GroupBits{0, 0, 0};
    }
    gpu_grid_wait();
    gpu_grid_release();
    float acc[M][R];
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int r = 0; r < R; ++r) acc[m][r] = 0.0f;
    for (; c < chunks; c += T) {
        uint4 nxt[R];
        GroupBits gnxt[R];
        const bool more = c + T < chunks;
        const int64_t g = group_of(c), gn = more ? group_of(c + T) : 0;
#pragma unroll
        for (int r = 0; r < R; ++r) {
            nxt[r] = more ? __ldg(wrow[r] + c + T) : make_uint4(0, 0, 0, 0);
            gnxt[r] = more ? load_group<C>(q, srow[r], gn) : GroupBits{0, 0, 0};
        }
        // One or two x rows stay in registers across the weight rows; more are read per row (L1).
        constexpr int MX = M <= 2 ? M : 1;
        float xv[MX][P];
        if constexpr (M <= 2) {
#pragma unroll
            for (int m = 0; m < M; ++m)
#pragma unroll
                for (int e = 0; e < P; e += 4) {
                    const float4 t = __ldg(reinterpret_cast<const float4*>(x + m * px + c * P + e));
                    xv[m][e] = t.x, xv[m][e + 1] = t.y, xv[m][e + 2] = t.z, xv[m][e + 3] = t.w;
                }
        }
        // With minima: each x row's sum over the chunk, which the chunk's minimum multiplies.
        float xsum[M];
#pragma unroll
        for (int m = 0; m < M; ++m) {
            xsum[m] = 0.0f;
            if (q.mins) {
#pragma unroll
                for (int e = 0; e < P; e += 4) {
                    if constexpr (M <= 2) {
                        xsum[m] += xv[m][e] + xv[m][e + 1] + xv[m][e + 2] + xv[m][e + 3];
                    } else {
                        const float4 u = __ldg(reinterpret_cast<const float4*>(x + m * px + c * P + e));
                        xsum[m] += u.x + u.y + u.z + u.w;
                    }
                }
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            const float s = bits_value(gcur[r].scale, q.sdt), base = base_of<C>(q, gcur[r], g);
            const float mn = q.mins ? bits_value(gcur[r].min, q.sdt) : 0.0f;
            float wv[P];
            widen<C>(cur[r], wv);
#pragma unroll
            for (int e = 0; e < P; ++e) wv[e] -= base;
#pragma unroll
            for (int m = 0; m < M; ++m) {
                float t = 0.0f;
                if constexpr (M <= 2) {
#pragma unroll
                    for (int e = 0; e < P; ++e) t += xv[m][e] * wv[e];
                } else {
#pragma unroll
                    for (int e = 0; e < P; e += 4) {
                        const float4 u = __ldg(reinterpret_cast<const float4*>(x + m * px + c * P + e));
                        t += u.x * wv[e] + u.y * wv[e + 1] + u.z * wv[e + 2] + u.w * wv[e + 3];
                    }
                }
                acc[m][r] += t * s - mn * xsum[m];
            }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            cur[r] = nxt[r];
            gcur[r] = gnxt[r];
        }
    }
    store_block_sums<M, R>(acc, q, y, py, n0, N);
}

// The many-row gemv's unit: 8 codes, two 32-bit words of 8-bit codes or one of 4-bit codes, so a
// lane reads 32 bytes of each x row a step. The 16-byte chunks of k_gemv_q16 (16 or 32 codes) read
// each x row once a weight row and chunk, from L1; with units, every x value loaded serves all R
// weight rows before the next x row loads, which is what several x rows need (M = 8 on the 8B
// shapes: 1.4x-5x faster, k_gemv_q16's comment has the numbers). Neither reaches memory speed yet:
// the 8B projections stream at 1-1.5 TB/s of an H100's 3.35 (docs/PERFORMANCE.md).
template <int C>
constexpr int kWords = (C == kI4 || C == kU4) ? 1 : 2;

template <int C>
struct Codes {
    uint32_t w[kWords<C>];
};

template <int C>
__device__ __forceinline__ Codes<C> load_codes(const uint8_t* row, int64_t c) {
    Codes<C> k;
    if constexpr (kWords<C> == 2) {
        const uint2 v = __ldg(reinterpret_cast<const uint2*>(row) + c);
        k.w[0] = v.x, k.w[1] = v.y;
    } else {
        k.w[0] = __ldg(reinterpret_cast<const unsigned int*>(row) + c);
    }
    return k;
}

// A unit's 8 codes as floats, in order: integer codes as 2^23 + their biased value, fp8 codes as
// their values (widen's rules, 8 codes at a time).
template <int C>
__device__ __forceinline__ void widen8(const Codes<C>& k, float (&out)[8]) {
    if constexpr (C == kI4 || C == kU4) {
        const uint32_t w = C == kI4 ? k.w[0] ^ 0x88888888u : k.w[0];
        const uint32_t lo = w & 0x0F0F0F0Fu, hi = (w >> 4) & 0x0F0F0F0Fu;  // nibbles 0,2,4,6 and 1,3,5,7
#pragma unroll
        for (int b = 0; b < 4; ++b) {
            out[2 * b] = magic_byte(lo, b);
            out[2 * b + 1] = magic_byte(hi, b);
        }
    } else {
        const uint4 raw = make_uint4(k.w[0], k.w[1], 0, 0);
        float wide[16];
        widen<C>(raw, wide);  // the first 8 of 16: the compiler drops the rest
#pragma unroll
        for (int e = 0; e < 8; ++e) out[e] = wide[e];
    }
}

// M rows of x (compile time, at most 8) against R weight rows a block; the block's threads split
// the row's units (blockDim.x of them, a multiple of 32, at most kThreads), each holding U unit
// steps of all R rows in flight (codes and scales: weights, so the first steps load before the
// previous kernel ends). Each unit's 8 products are summed, then scaled once (a minimum, then,
// times the unit's sum of x); x is read once a unit and x row, for every weight row.
template <int C, int M, int R, int U>
__global__ void __launch_bounds__(kThreads, kMinBlocks) k_gemv_q(const float* __restrict__ x, int64_t px, QPlanes q, float* __restrict__ y, int64_t py,
                                                     int64_t N, int64_t K) {
    const int T = static_cast<int>(blockDim.x);
    const int64_t n0 = static_cast<int64_t>(blockIdx.x) * R, units = K / 8;
    const GroupOf group_of = group_of_units(q.group / 8);
    const uint8_t* wrow[R];
    int64_t srow[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int64_t row = min(n0 + r, N - 1);
        wrow[r] = q.w + row * q.wpitch;
        srow[r] = row / q.group_rows;
    }
    Codes<C> raw[U][R];
    GroupBits gb[U][R];
    auto load = [&](int64_t c0) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t c = c0 + static_cast<int64_t>(u) * T;
            const bool in = c < units;
            const int64_t g = in ? group_of(c) : 0;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if (in) {
                    raw[u][r] = load_codes<C>(wrow[r], c);
                    gb[u][r] = load_group<C>(q, srow[r], g);
                }
            }
        }
    };
    int64_t c0 = threadIdx.x;
    load(c0);
    gpu_grid_wait();
    gpu_grid_release();
    float acc[M][R];
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int r = 0; r < R; ++r) acc[m][r] = 0.0f;
    for (;;) {
#pragma unroll
        for (int u = 0; u < U; ++u) {
            const int64_t c = c0 + static_cast<int64_t>(u) * T;
            if (c >= units) break;
            const int64_t g = group_of(c);
            float wv[R][8], sc[R], mn[R];
#pragma unroll
            for (int r = 0; r < R; ++r) {
                widen8<C>(raw[u][r], wv[r]);
                const float base = base_of<C>(q, gb[u][r], g);
#pragma unroll
                for (int e = 0; e < 8; ++e) wv[r][e] -= base;
                sc[r] = bits_value(gb[u][r].scale, q.sdt);
                mn[r] = q.mins ? bits_value(gb[u][r].min, q.sdt) : 0.0f;
            }
#pragma unroll
            for (int m = 0; m < M; ++m) {
                const float4 a = __ldg(reinterpret_cast<const float4*>(x + m * px + c * 8));
                const float4 b = __ldg(reinterpret_cast<const float4*>(x + m * px + c * 8 + 4));
                const float xv[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
                // with minima: the unit's sum of x, which its minimum multiplies
                const float xs = q.mins ? ((a.x + a.y) + (a.z + a.w)) + ((b.x + b.y) + (b.z + b.w)) : 0.0f;
#pragma unroll
                for (int r = 0; r < R; ++r) {
                    float t = 0.0f;
#pragma unroll
                    for (int e = 0; e < 8; ++e) t += xv[e] * wv[r][e];
                    acc[m][r] += t * sc[r] - mn[r] * xs;
                }
            }
        }
        c0 += static_cast<int64_t>(U) * T;
        if (c0 >= units) break;
        load(c0);
    }
    store_block_sums<M, R>(acc, q, y, py, n0, N);
}

// Any shape: one warp per (row, column), each code decoded alone.
__global__ void k_gemv_q_scalar(const float* x, int64_t px, QPlanes q, int qt, float* y, int64_t py, int64_t M, int64_t N, int64_t K) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t t = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarpSize) + threadIdx.x / kWarpSize;
    if (t >= M * N) return;
    const int64_t m = t / N, n = t % N, sr = n / q.group_rows;
    const uint8_t* row = q.w + n * q.wpitch;
    float s = 0.0f;
    for (int64_t k = threadIdx.x % kWarpSize; k < K; k += kWarpSize) {
        const int64_t g = k / q.group;
        const float z = q.zero ? code_value(qt, q.zero + sr * q.zpitch, g) : 0.0f;
        const float mn = q.mins ? load_float(q.mins, q.sdt, sr * q.scols + g) : 0.0f;
        s += x[m * px + k] * ((code_value(qt, row, k) - z) * load_float(q.scale, q.sdt, sr * q.scols + g) - mn);
    }
    s = gpu_warp_sum(s);
    if (threadIdx.x % kWarpSize == 0) y[m * py + n] = q.bias ? s + load_float(q.bias, q.bdt, n) : s;
}

// Weight rows [n0, n0 + rows) as bf16 into out ([rows, K]): a thread per 16-byte chunk (the
// vector path's shapes) ...
template <int C>
__global__ void k_dequant_q(QPlanes q, int64_t n0, int64_t rows, int64_t K, gpu_bf16* out) {
    constexpr int P = kPerChunk<C>;
    gpu_grid_wait();  // the previous slab's product may still read `out`
    gpu_grid_release();
    const int64_t chunks = K / P, i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= rows * chunks) return;
    const int64_t r = i / chunks, c = i % chunks, row = n0 + r, srow = row / q.group_rows, g = c / (q.group / P);
    float wv[P];
    widen<C>(__ldg(reinterpret_cast<const uint4*>(q.w + row * q.wpitch) + c), wv);
    const GroupBits gb = load_group<C>(q, srow, g);
    const float s = bits_value(gb.scale, q.sdt), base = base_of<C>(q, gb, g);
    const float mn = q.mins ? bits_value(gb.min, q.sdt) : 0.0f;
    union {
        gpu_bf16 h[8];
        uint4 u;
    } o;
    uint4* dst = reinterpret_cast<uint4*>(out + r * K + c * P);
#pragma unroll
    for (int v = 0; v < P / 8; ++v) {
#pragma unroll
        for (int e = 0; e < 8; ++e) o.h[e] = gpu_f32_to_bf16((wv[8 * v + e] - base) * s - mn);
        dst[v] = o.u;
    }
}

// ... or a thread per value (any shape).
__global__ void k_dequant_q_scalar(QPlanes q, int qt, int64_t n0, int64_t rows, int64_t K, gpu_bf16* out) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= rows * K) return;
    const int64_t r = i / K, k = i % K, row = n0 + r, sr = row / q.group_rows, g = k / q.group;
    const float z = q.zero ? code_value(qt, q.zero + sr * q.zpitch, g) : 0.0f;
    const float mn = q.mins ? load_float(q.mins, q.sdt, sr * q.scols + g) : 0.0f;
    out[i] = gpu_f32_to_bf16((code_value(qt, q.w + row * q.wpitch, k) - z) * load_float(q.scale, q.sdt, sr * q.scols + g) - mn);
}

// x's columns in the stored order of a weight with the perm transform (operand 7, docs/OPS.md):
// out[m][j] = x[m][perm[j]], f32 (few rows: the gemv's x) ...
__global__ void k_gather_cols(const float* x, int64_t px, const int32_t* perm, float* out, int64_t K) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t m = blockIdx.y;
    for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < K; j += static_cast<int64_t>(gridDim.x) * blockDim.x)
        out[m * K + j] = x[m * px + perm[j]];
}

// ... or rounded to bf16 (many rows: the slabs' product reads x narrowed).
__global__ void k_gather_cols_bf16(const float* x, int64_t px, const int32_t* perm, gpu_bf16* out, int64_t K) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t m = blockIdx.y;
    for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < K; j += static_cast<int64_t>(gridDim.x) * blockDim.x)
        out[m * K + j] = gpu_f32_to_bf16(x[m * px + perm[j]]);
}

template <typename F>
int with_code_kind(int qt, F&& f) {
    switch (qt) {
    case RAD_I8: return f(std::integral_constant<int, kI8>{});
    case RAD_U8: return f(std::integral_constant<int, kU8>{});
    case RAD_I4: return f(std::integral_constant<int, kI4>{});
    case RAD_U4: return f(std::integral_constant<int, kU4>{});
    case RAD_FP8_E4M3: return f(std::integral_constant<int, kF8>{});
    default: return RAD_E_DTYPE;
    }
}

template <int C, int M>
void launch_gemv(const float* x, int64_t px, const QPlanes& q, float* y, int64_t py, int64_t N, int64_t K, gpuStream_t s, bool chunks16) {
    if constexpr (M <= 2) {
        if (chunks16) {  // 16-byte chunks (k_gemv_q16 says when each kernel wins)
            const int64_t chunks = K / kPerChunk<C>;
            const int threads = static_cast<int>(std::min<int64_t>(kThreads, (chunks + kWarpSize - 1) / kWarpSize * kWarpSize));
            gpu_launch(k_gemv_q16<C, M>, static_cast<unsigned>((N + kRows - 1) / kRows), threads, 0, s, x, px, q, y, py, N, K);
            return;
        }
    }
    constexpr int R = kRows, U = 4;  // four unit steps of four rows in flight a thread
    const int64_t per_thread = (K / 8 + U - 1) / U;
    const int threads = static_cast<int>(std::min<int64_t>(kThreads, (per_thread + kWarpSize - 1) / kWarpSize * kWarpSize));
    gpu_launch(k_gemv_q<C, M, R, U>, static_cast<unsigned>((N + R - 1) / R), threads, 0, s, x, px, q, y, py, N, K);
}

template <int C>
void gemv(const float* x, int64_t px, const QPlanes& q, float* y, int64_t py, int64_t M, int64_t N, int64_t K, gpuStream_t s, bool chunks16) {
    switch (M) {
    case 1: launch_gemv<C, 1>(x, px, q, y, py, N, K, s, chunks16); break;
    case 2: launch_gemv<C, 2>(x, px, q, y, py, N, K, s, chunks16); break;
    case 3: launch_gemv<C, 3>(x, px, q, y, py, N, K, s, chunks16); break;
    case 4: launch_gemv<C, 4>(x, px, q, y, py, N, K, s, chunks16); break;
    case 5: launch_gemv<C, 5>(x, px, q, y, py, N, K, s, chunks16); break;
    case 6: launch_gemv<C, 6>(x, px, q, y, py, N, K, s, chunks16); break;
    case 7: launch_gemv<C, 7>(x, px, q, y, py, N, K, s, chunks16); break;
    default: launch_gemv<C, 8>(x, px, q, y, py, N, K, s, chunks16); break;
    }
}

// Rows of a bf16 slab: about 64 MiB of dequantised weights, whole multiples of 128 rows.
int64_t slab_rows(int64_t N, int64_t K) {
    const int64_t fit = std::max<int64_t>(128, (int64_t{64} << 20) / (2 * K) / 128 * 128);
    return std::min(N, fit);
}

uint64_t round256(uint64_t b) { return (b + 255) / 256 * 256; }

template <typename T>
__global__ void k_add_bias_q(float* y, int64_t py, QPlanes q, int64_t N) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t m = blockIdx.y;
    for (int64_t n = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; n < N; n += static_cast<int64_t>(gridDim.x) * blockDim.x)
        y[m * py + n] += load_float(q.bias, q.bdt, n);
}

}  // namespace

uint64_t gemm_q_scratch(const RadArgs* geom) {
    const int64_t M = rad_args_geti(geom, "M"), N = rad_args_geti(geom, "N"), K = rad_args_geti(geom, "K");
    // few rows: room for x gathered by a perm transform (operand 7), whether or not a weight has one
    if (M <= 8) return round256(static_cast<uint64_t>(M * K) * 4);
    return kBlasWorkspace + round256(static_cast<uint64_t>(M * K) * 2) + round256(static_cast<uint64_t>(slab_rows(N, K) * K) * 2);
}

int gemm_q(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *scale = rad_arg_in(a, 2), *zero = rad_arg_in(a, 3),
                    *bias = rad_arg_in(a, 4);
    RadTensor* y = rad_arg_out(a, 5);
    const RadTensor* mins = rad_arg_in(a, 6);  // after y (docs/OPS.md)
    const RadTensor* perm = rad_arg_in(a, 7);  // the perm transform: x's columns in the stored order
    const int qt = rad_dtype_from_name(rad_args_gets_or(a, "qtype", "")), sdt = rad_dtype_from_name(rad_args_gets_or(a, "sdtype", ""));
    if (mins && mins->dtype != sdt) return RAD_E_DTYPE;
    if (!x || !w || !scale || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32 || w->dtype != qt || scale->dtype != sdt) return RAD_E_DTYPE;
    if ((zero && zero->dtype != qt) || (sdt != RAD_F32 && sdt != RAD_F16 && sdt != RAD_BF16)) return RAD_E_DTYPE;
    if (bias && bias->dtype != RAD_F32 && bias->dtype != RAD_F16 && bias->dtype != RAD_BF16) return RAD_E_DTYPE;
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N"), K = rad_args_geti(a, "K");
    const int64_t group = rad_args_geti(a, "group"), group_rows = rad_args_geti(a, "group_rows");
    if (M <= 0 || N <= 0 || K <= 0 || group <= 0 || group_rows <= 0) return RAD_E_SHAPE;
    if (perm) {  // i32, K entries (a [1, K] table)
        int64_t n = 1;
        for (int d = 0; d < perm->rank; ++d) n *= perm->shape[d];
        if (perm->dtype != RAD_I32 || n != K) return RAD_E_SHAPE;
    }
    const int64_t scols = (K + group - 1) / group;
    const QPlanes q{static_cast<const uint8_t*>(w->data),
                    static_cast<int64_t>(rad_row_bytes(qt, static_cast<uint64_t>(K))),
                    scale->data,
                    sdt,
                    scols,
                    zero ? static_cast<const uint8_t*>(zero->data) : nullptr,
                    static_cast<int64_t>(rad_row_bytes(qt, static_cast<uint64_t>(scols))),
                    group,
                    group_rows,
                    bias ? bias->data : nullptr,
                    bias ? bias->dtype : RAD_F32,
                    mins ? mins->data : nullptr};
    const auto* xp = static_cast<const float*>(x->data);
    auto* yp = static_cast<float*>(y->data);
    int64_t px = pitch_elems(x);
    const int64_t py = pitch_elems(y);
    gpuStream_t s = stream_of(a);
    const auto* pp = perm ? static_cast<const int32_t*>(perm->data) : nullptr;
    if (pp && M <= 8) {  // the gemvs read x gathered into the scratch gemm_q_scratch keeps for it
        if (!a->scratch || a->scratch_bytes < static_cast<uint64_t>(M * K) * 4) return RAD_E_ARG;
        auto* xg = static_cast<float*>(a->scratch);
        gpu_launch(k_gather_cols, dim3(static_cast<unsigned>(ceil_div(K, 1024)), static_cast<unsigned>(M)), 256, 0, s, xp, px, pp, xg, K);
        xp = xg;
        px = K;
    }
    const int per = (qt == RAD_I4 || qt == RAD_U4) ? 32 : 16;
    // The chunk kernels' shapes (the slabs' dequantiser): whole 16-byte chunks a row and a group,
    // 16-byte aligned rows and x; the gemv's: whole units of 8 codes, rows aligned to a unit.
    const bool aligned_x = px % 4 == 0 && reinterpret_cast<uintptr_t>(xp) % 16 == 0;
    const bool vec = K % per == 0 && group % per == 0 && q.wpitch % 16 == 0 && reinterpret_cast<uintptr_t>(q.w) % 16 == 0 && aligned_x;
    const int unit_bytes = per / 4;  // 8 codes: 8 bytes, or 4 of 4-bit codes
    const bool gemv_vec = K % 8 == 0 && group % 8 == 0 && q.wpitch % unit_bytes == 0 && reinterpret_cast<uintptr_t>(q.w) % unit_bytes == 0 &&
                          aligned_x;
    const uint64_t xb_bytes = round256(static_cast<uint64_t>(M * K) * 2), slab = static_cast<uint64_t>(slab_rows(N, K));
    const bool room = a->scratch && a->scratch_bytes >= kBlasWorkspace + xb_bytes + round256(slab * static_cast<uint64_t>(K) * 2);
    if (pp && M > 8 && !room) return RAD_E_ARG;  // no scalar path reads a gathered x
    if (M <= 8 || !room) {
        if (gemv_vec && M <= 8)
            with_code_kind(qt, [&](auto kind) {
                gemv<decltype(kind)::value>(xp, px, q, yp, py, M, N, K, s, vec);
                return RAD_OK;
            });
        else
            gpu_launch(k_gemv_q_scalar, static_cast<unsigned>((M * N + 7) / 8), 256, 0, s, xp, px, q, qt, yp, py, M, N, K);
        return launched();
    }
    // Many rows: x narrowed once, then each slab of weight rows dequantised and multiplied.
    auto* ws = static_cast<uint8_t*>(a->scratch);
    auto* xb = reinterpret_cast<gpu_bf16*>(ws + kBlasWorkspace);
    auto* wb = reinterpret_cast<gpu_bf16*>(ws + kBlasWorkspace + xb_bytes);
    if (pp)
        gpu_launch(k_gather_cols_bf16, dim3(static_cast<unsigned>(ceil_div(K, 1024)), static_cast<unsigned>(M)), 256, 0, s, xp, px, pp, xb, K);
    else
        narrow_to_bf16(xp, px, xb, M, K, s);
    QPlanes slab_q = q;
    slab_q.bias = nullptr;  // added once, after every slab
    for (int64_t n0 = 0; n0 < N; n0 += static_cast<int64_t>(slab)) {
        const int64_t rows = std::min<int64_t>(static_cast<int64_t>(slab), N - n0);
        if (vec) {
            with_code_kind(qt, [&](auto kind) {
                constexpr int C = decltype(kind)::value;
                const int64_t n = rows * (K / kPerChunk<C>);
                gpu_launch(k_dequant_q<C>, static_cast<unsigned>((n + 255) / 256), 256, 0, s, slab_q, n0, rows, K, wb);
                return RAD_OK;
            });
        } else {
            gpu_launch(k_dequant_q_scalar, static_cast<unsigned>((rows * K + 255) / 256), 256, 0, s, slab_q, qt, n0, rows, K, wb);
        }
        // (with a perm no f32 x in the stored order exists: a product that needs one fails, never reads x unpermuted)
        const int rc = slab_product_bf16(pp ? nullptr : xp, px, xb, wb, yp + n0, py, M, rows, K, ws, s);
        if (rc != RAD_OK) return rc;
    }
    if (bias)
        gpu_launch(k_add_bias_q<float>, dim3(static_cast<unsigned>(ceil_div(N, 1024)), static_cast<unsigned>(M)), 256, 0, s, yp, py, q, N);
    return launched();
}

}  // namespace gpu
