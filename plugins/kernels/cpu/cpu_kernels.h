// cpu_kernels.h: what libcpu's launchers (default-target code) hand to the per-ISA kernel bodies.
//
// Every op is split in two: a launcher (launch_*.cpp) that validates operands, reads parameters
// and cuts the work into tasks for the thread pool, and a kernel that computes a range of rows (or
// one task) with one instruction set. The kernels of one ISA are compiled in one translation unit
// (isa_*.cpp) and reached through a KernelTable chosen once at rad_plugin_open.
#pragma once
#include <radiance/rad_decode.h>
#include <radiance/rad_plugin.h>

#include <cstdint>
#include <cstring>

namespace cpu {

// ISA levels, as avx_isa_force numbers them. Level 3 is level 2 plus AVX512_BF16 dot products
// for bf16 weights in gemm: opt-in (avx_isa_force(3), RADIANCE_CPU_ISA=avx512bf16), since it
// measured slower than level 2 (body_gemm_bf16dot.inc says why).
enum Isa : int { kIsaScalar = 0, kIsaAvx2 = 1, kIsaAvx512 = 2, kIsaAvx512Bf16 = 3, kIsaCount = 4 };

// f32 rows at a byte pitch.
struct RowsIn {
    const char* base;
    int64_t pitch;
    const float* row(int64_t i) const { return reinterpret_cast<const float*>(base + i * pitch); }
};
struct RowsOut {
    char* base;
    int64_t pitch;
    float* row(int64_t i) const { return reinterpret_cast<float*>(base + i * pitch); }
};

// A weight stored quantised (gemm_q, docs/OPS.md): the affine scheme's planes as stored.
struct QuantW {
    const uint8_t* codes;  // [N, K] of qt: i8, u8, i4, u4 (low nibble first) or fp8_e4m3
    int qt;
    uint64_t code_pitch;   // bytes a row
    const uint8_t* scale;  // [ceil(N / group_rows), ceil(K / group)] of sdt
    int sdt;
    uint64_t scale_pitch;
    const uint8_t* zero;  // as scale, of qt; null: none
    uint64_t zero_pitch;
    const uint8_t* min;  // as scale, of sdt: w = (c - z) * s - m (a GGUF K-quant's); null: none
    uint64_t min_pitch;
    int64_t group, group_rows;
};

// A weight dtype standing for "quantised: see GemmArgs.q" in the packed kernel's dispatch.
inline constexpr int kDtQuant = 1000;

struct GemmArgs {
    RowsIn x;          // [M, K]
    const void* w;     // [N, K], dense, dtype wdt
    int wdt;           // RAD_F32 / RAD_BF16 / RAD_F16, or kDtQuant with q
    const QuantW* q;   // gemm_q's weight (w unused), or null
    const void* bias;  // [N] or null
    int bdt;
    RowsOut y;  // [M, N]
    int64_t M, N, K;
    // The bf16-dot path (level 3): x split exactly into three bf16 parts, row m at
    // xbf + m * 3 * kpad (hi, mid, lo), zero padded to kpad (a multiple of 32).
    const uint16_t* xbf;
    int64_t kpad;
    // --deterministic (deterministic.h): the row walk keeps two accumulators a row whatever the
    // number of rows, so a row's order does not depend on its company.
    bool two_acc = false;
};

struct NormArgs {
    RowsIn x;
    RowsOut y;
    const void* w;
    int wdt;
    const void* b;  // layer_norm bias or null
    int bdt;
    int64_t dim, groups;
    float eps;
    bool unit_offset;
};

enum ActKind : int { kSwiglu = 0, kGeglu = 1, kGeluErf = 2, kGeluTanh = 3 };
struct ActArgs {
    RowsIn x;
    RowsOut y;
    int64_t dim;
    int kind;  // ActKind
};

struct AddArgs {
    RowsIn a, b;
    RowsOut y;
    int64_t dim;
};

struct EmbedArgs {
    const int32_t* ids;
    const void* table;  // [vocab, dim], dtype tdt
    int tdt;
    RowsOut y;
    int64_t dim;
    float scale;
};

struct RopeArgs {
    RowsOut x;
    int64_t n_head, head_dim, rot;
    bool gptj;
    // Per-row cos/sin tables (times yarn's attention factor), row i at cs + i * cs_stride.
    // neox: cos[rot/2] then sin[rot/2]. gptj, expanded to the interleaved pairs: cos[rot] with
    // cos_j at 2j and 2j+1, then sin[rot] with -sin_j at 2j and +sin_j at 2j+1.
    const float* cs;
    int64_t cs_stride;
};

struct AttnArgs {
    RowsIn q;
    RowsOut y;
    const void* kc;  // [blocks, block, Hkv, hd], dtype cdt (k_cache and v_cache share it)
    const void* vc;
    int cdt;
    const int32_t* pos;
    const int32_t* tables;  // block tables [n_seq, stride]
    int64_t stride;
    const int32_t* row_seq;  // row i -> its sequence
    int64_t n_head, n_head_kv, head_dim, block;
    int64_t window;
    float scale, softcap;
    // An fp8 cache (cdt RAD_FP8_E4M3): the K and V scales, f32 [blocks, block, Hkv] (rad_kv_fp8.h).
    const float* kscale = nullptr;
    const float* vscale = nullptr;
};

// One instruction set's kernels. A null entry means "not available at this level".
struct KernelTable {
    const char* name;
    // Decode gemm: y[m0:m1, n0:n1] over all of K (bias included), w streamed once (m1 - m0 <= 8).
    void (*gemm)(const GemmArgs&, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
    // Prefill gemm: x packed by pack_x into tiles of packed_mt rows and K blocks of packed_kc
    // (m-tiles [t0, t1) per call), then y[tiles t0..t1, n0..n1]; n0 and n1 - n0 multiples of 12.
    void (*pack_x)(const GemmArgs&, float* xt, int64_t t0, int64_t t1);
    void (*gemm_packed)(const GemmArgs&, const float* xt, int64_t t0, int64_t t1, int64_t n0, int64_t n1);
    int64_t packed_mt, packed_kc;
    void (*rms_norm)(const NormArgs&, int64_t i0, int64_t i1);
    void (*layer_norm)(const NormArgs&, int64_t i0, int64_t i1);
    void (*act)(const ActArgs&, int64_t i0, int64_t i1);
    void (*add)(const AddArgs&, int64_t i0, int64_t i1);
    void (*embed)(const EmbedArgs&, int64_t i0, int64_t i1);
    void (*rope)(const RopeArgs&, int64_t i0, int64_t i1);
    void (*attention)(const AttnArgs&, int64_t task);  // task = row * n_head_kv + kv head
    // Level 3 only: the gemm over x pre-split by pack_bf16 (GemmArgs.xbf).
    void (*gemm_bf16dot)(const GemmArgs&, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
    void (*pack_bf16)(const GemmArgs&, uint16_t* out, int64_t m0, int64_t m1);
    // gemm_q's decode kernel (GemmArgs.q), as `gemm`; its prefill is gemm_packed with wdt kDtQuant.
    void (*gemm_q)(const GemmArgs&, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
    // --deterministic's gemm past 8 rows: the row walk's order (two partials a row), blocked as a
    // gemm (body_gemm_walk.inc); any row count per call, bias included.
    void (*gemm_walk)(const GemmArgs&, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
    // --deterministic's gemm_q past 8 rows: gemm_q's walk order, blocked (body_gemm_q_walk.inc).
    void (*gemm_q_walk)(const GemmArgs&, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
};

extern const KernelTable kTableScalar;
extern const KernelTable kTableAvx2;
extern const KernelTable kTableAvx512;
extern const KernelTable kTableAvx512Bf16;  // kTableAvx512 with the bf16-dot gemm

// The table in effect (set at rad_plugin_open, changed by avx_isa_force).
const KernelTable& kernels();
int isa_level();
// Levels this machine runs (CPUID + the OS saving the registers); init once.
bool isa_supported(int level);
void isa_init();
// How far ahead (bytes) the decode row walk prefetches w into cache: 2 KiB took the 2-core Xeon
// VM's decode from ~13.6 to ~15-18 tok/s, 1 and 4 KiB were close, 8-16 KiB worse; on the H200
// host's 16 cores 36.7 tok/s against 36.0 at 4 KiB and 30.8 with none (docs/PERFORMANCE.md).
inline constexpr int kDecodeRowsAhead = 2048;
// The fewest 12-row tiles of w a decode task streams. At 16 the 1B shape's narrow projections
// (N = 2048-3072) made one task per thread, so a thread a busy VM slowed held up every region;
// with 4, three or four tasks a thread let the others take its share: tg128 on the H200 host's
// 16 cores 36.5-44.2 -> 39.4-45.5 tok/s (docs/PERFORMANCE.md, session 9).
inline constexpr int kDecodeMinTiles = 4;
// The most rows of x the row walk serves; more go to the packed prefill kernel (or AMX). On the
// 2-core Xeon VM (Qwen2.5-0.5B shape) it prefilled 12 / 16 / 24-token prompts 1.7-3.1x / 1.4x /
// 1.1x faster than the packed kernel, whose packing and edge tiles weigh most at small M, and
// 32 / 64 tokens 0.88x / 0.74x as fast.
inline constexpr int kRowWalkRows = 24;
const char* isa_features();  // e.g. "avx2 fma f16c", for a human

}  // namespace cpu

// The launchers (one per op row), for exports.cpp.
int cpu_embed(const RadArgs* a);
int cpu_rms_norm(const RadArgs* a);
int cpu_layer_norm(const RadArgs* a);
int cpu_gemm(const RadArgs* a);
int cpu_gemm_decode(const RadArgs* a);
int cpu_gemm_q(const RadArgs* a);
int cpu_gemm_q_decode(const RadArgs* a);
int cpu_rope(const RadArgs* a);
int cpu_attention(const RadArgs* a);
int cpu_swiglu(const RadArgs* a);
int cpu_geglu(const RadArgs* a);
int cpu_gelu(const RadArgs* a);
int cpu_softcap(const RadArgs* a);
int cpu_add(const RadArgs* a);
int cpu_gather_rows(const RadArgs* a);
int cpu_moe_route(const RadArgs* a);
int cpu_moe_mlp(const RadArgs* a);
int cpu_moe_mlp_decode(const RadArgs* a);
uint64_t cpu_moe_mlp_decode_scratch(const RadArgs* geom);
int cpu_gated_add(const RadArgs* a);
