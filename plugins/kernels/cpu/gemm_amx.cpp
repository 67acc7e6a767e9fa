// gemm_amx.cpp: the prefill gemm on Intel AMX tiles (TDPBF16PS) for bf16 weights, where the CPU
// has AMX-BF16 and Linux grants the tile state (Sapphire Rapids and later Xeons).
//
// A tile product C[16 x 16] += A[16 x 32] . B[32 x 16] in bf16 with f32 sums. The weights are A
// as they are stored (16 rows of w, 32 values of K a tile row), read in place; x is B, split
// exactly into three bf16 parts (hi + mid + lo carry all 24 bits of an f32 mantissa, as level 3
// does) and packed once a call in the pair-interleaved layout TDPBF16PS reads. So y = x . w^T
// keeps f32 accuracy while a tile op does 16 x 16 x 32 multiply-adds. C holds y transposed
// (w rows by x rows). Each task keeps four C tiles (32 w rows by 32 x rows), two A and two B.
#include "gemm_amx.h"

#include <algorithm>
#include <vector>

#include "pool.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#define AMX_X86 1
#endif

namespace cpu {

#ifdef AMX_X86
namespace {

constexpr int64_t kTile = 16;          // rows of a tile; x rows (columns of C) a B tile holds
constexpr int64_t kStep = 32;          // bf16 values of K a tile row holds
constexpr int64_t kBlock = 2 * kTile;  // w rows and x rows a task step covers (2 x 2 C tiles)
constexpr int kParts = 3;
// x rows a task covers: a multiple of 32 whose packed parts (K * 6 bytes a row) fit this much of
// L2, at most 256 rows (down projections, K = 4,864: 32 rows; K = 896: 128)
constexpr int64_t kGroupBytes = 768 << 10, kMaxGroupRows = 256;
constexpr int64_t kTileElems = kTile * kStep;  // bf16 values a packed B tile holds

struct TileConfig {
    uint8_t palette = 1, start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

// r (16 rows of 16 32-bit values) into t = r transposed, in three shuffle stages.
__attribute__((target("avx512f"))) inline void transpose16(__m512 (&r)[16], __m512 (&t)[16]) {
    for (int i = 0; i < 16; i += 2) {  // 2 x 2 blocks of single values
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4)  // 4 x 4 blocks (pairs of values)
        for (int h = 0; h < 2; ++h) {
            const __m512d a = _mm512_castps_pd(t[i + h]), b = _mm512_castps_pd(t[i + 2 + h]);
            r[i + h] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
            r[i + 2 + h] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
        }
    // Now 128-bit lane L of r[4B + q] holds column 4L + o(q) of rows 4B..4B+3, o = (0, 2, 1, 3):
    // a 4 x 4 transpose of lanes over B puts column 4L + o(q) of all 16 rows in one register.
    for (int q = 0; q < 4; ++q) {
        const int o = q == 1 ? 2 : q == 2 ? 1 : q;
        const __m512 a = _mm512_shuffle_f32x4(r[q], r[4 + q], 0x88), b = _mm512_shuffle_f32x4(r[q], r[4 + q], 0xdd);
        const __m512 c2 = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0x88), d = _mm512_shuffle_f32x4(r[8 + q], r[12 + q], 0xdd);
        t[o] = _mm512_shuffle_f32x4(a, c2, 0x88);      // lane 0 of each
        t[8 + o] = _mm512_shuffle_f32x4(a, c2, 0xdd);  // lane 2
        t[4 + o] = _mm512_shuffle_f32x4(b, d, 0x88);   // lane 1
        t[12 + o] = _mm512_shuffle_f32x4(b, d, 0xdd);  // lane 3
    }
}

// Word 2kk of the pack's permute: the top half of value 2kk (16-bit element 4kk + 1 of the two
// inputs seen as 64 words); word 2kk + 1: the top half of value 2kk + 1 (element 4kk + 3).
struct PairPick {
    alignas(64) uint16_t w[32];
    constexpr PairPick() : w{} {
        for (int kk = 0; kk < 16; ++kk) {
            w[2 * kk] = static_cast<uint16_t>(4 * kk + 1);
            w[2 * kk + 1] = static_cast<uint16_t>(4 * kk + 3);
        }
    }
};
constexpr PairPick kPairPick;

// x rows of block b (16 rows; rows past M are zeros) into xp, laid out
// [x block][K step][part][16 pair rows][16 x rows][2]. Per row and K step, 32 values split into
// their three parts (each the top 16 bits of what the parts before leave), the pairs of each
// part gathered into 16 words (AVX512BW word permute), then 16 rows of words transposed into the
// tile's pair rows.
__attribute__((target("avx512f,avx512bw"))) void pack_block(const GemmArgs& g, uint16_t* xp, int64_t steps, int64_t b) {
    const __m512i top = _mm512_set1_epi32(static_cast<int>(0xffff0000u));
    const __m512i idx = _mm512_load_si512(kPairPick.w);
    for (int64_t s = 0; s < steps; ++s) {
        __m512 rows[kParts][16], cols[16];
        for (int64_t r = 0; r < kTile; ++r) {
            const int64_t m = b * kTile + r;
            __m512 v0 = _mm512_setzero_ps(), v1 = _mm512_setzero_ps();
            if (m < g.M) {
                v0 = _mm512_loadu_ps(g.x.row(m) + s * kStep);
                v1 = _mm512_loadu_ps(g.x.row(m) + s * kStep + 16);
            }
            for (int part = 0; part < kParts; ++part) {
                const __m512 h0 = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v0), top));
                const __m512 h1 = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v1), top));
                rows[part][r] = _mm512_castsi512_ps(_mm512_permutex2var_epi16(_mm512_castps_si512(h0), idx, _mm512_castps_si512(h1)));
                v0 = _mm512_sub_ps(v0, h0);  // exact: h is v with its low mantissa bits cleared
                v1 = _mm512_sub_ps(v1, h1);
            }
        }
        uint16_t* tile = xp + ((b * steps + s) * kParts) * kTileElems;
        for (int part = 0; part < kParts; ++part) {
            transpose16(rows[part], cols);
            for (int kk = 0; kk < 16; ++kk) _mm512_storeu_ps(tile + part * kTileElems + kk * 2 * kTile, cols[kk]);
        }
    }
}

// C tiles 0-3 over every K step for w rows [n, n + 32) and x blocks xb, xb + 1. Tile numbers are
// immediates, hence the straight-line code.
__attribute__((target("amx-tile,amx-bf16"))) void block_product(const uint16_t* w, int64_t K, const uint16_t* xp0, const uint16_t* xp1,
                                                                int64_t steps) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    const int64_t wstride = K * 2;
    for (int64_t s = 0; s < steps; ++s) {
        _tile_loadd(4, w + s * kStep, wstride);
        _tile_loadd(5, w + kTile * K + s * kStep, wstride);
        const uint16_t* b0 = xp0 + s * kParts * kTileElems;
        const uint16_t* b1 = xp1 + s * kParts * kTileElems;
        for (int part = 0; part < kParts; ++part) {
            _tile_loadd(6, b0 + part * kTileElems, 64);
            _tile_loadd(7, b1 + part * kTileElems, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
}

__attribute__((target("amx-tile,amx-bf16"))) void store_c(float (*c)[kTile * kTile]) {
    _tile_stored(0, c[0], 64);
    _tile_stored(1, c[1], 64);
    _tile_stored(2, c[2], 64);
    _tile_stored(3, c[3], 64);
}

__attribute__((target("amx-tile"))) void tiles_on() {
    alignas(64) TileConfig cfg;
    for (int t = 0; t < 8; ++t) {
        cfg.colsb[t] = 64;
        cfg.rows[t] = kTile;
    }
    // GCC's _tile_loadconfig tells the compiler of no read past the first bytes, which let it
    // drop the stores above (every tile then faults as unconfigured): publish the whole object.
    __asm__ volatile("" : : "r"(&cfg) : "memory");
    _tile_loadconfig(&cfg);
}
__attribute__((target("amx-tile"))) void tiles_off() { _tile_release(); }

// c (16 x 16, row i = w row n0 + i, column j = x row) into y rows m0.. (up to `rows` of them),
// columns n0..n0 + 16, plus the bias: transposed in registers, then one 16-wide store a row.
__attribute__((target("avx512f"))) void write_transposed(const float* c, const GemmArgs& g, int64_t m0, int64_t rows, int64_t n0) {
    __m512 r[16], t[16];
    for (int i = 0; i < 16; ++i) r[i] = _mm512_load_ps(c + i * kTile);
    transpose16(r, t);
    __m512 bias = _mm512_setzero_ps();
    if (g.bias) {
        alignas(64) float bv[kTile];
        for (int i = 0; i < kTile; ++i) bv[i] = rad_load_f32(g.bdt, g.bias, n0 + i);
        bias = _mm512_load_ps(bv);
    }
    for (int64_t j = 0; j < rows; ++j) _mm512_storeu_ps(g.y.row(m0 + j) + n0, _mm512_add_ps(t[j], bias));
}

struct Task {
    const GemmArgs* g;
    const uint16_t* xp;
    int64_t steps, x_blocks, group_blocks;
};

// y for x rows of group gi and w rows [n0, n1) (multiples of 32 below n_cols).
void run_task(const Task& t, int64_t gi, int64_t n0, int64_t n1) {
    const GemmArgs& g = *t.g;
    const auto* w = static_cast<const uint16_t*>(g.w);
    const int64_t b_begin = gi * t.group_blocks, b_end = std::min(t.x_blocks, b_begin + t.group_blocks);
    alignas(64) float c[4][kTile * kTile];
    tiles_on();
    for (int64_t n = n0; n < n1; n += kBlock)
        for (int64_t b = b_begin; b < b_end; b += 2) {
            block_product(w + n * g.K, g.K, t.xp + b * t.steps * kParts * kTileElems, t.xp + (b + 1) * t.steps * kParts * kTileElems,
                          t.steps);
            store_c(c);
            // c[2 * wi + xi][i * 16 + j] = y[x row (b + xi) * 16 + j][w row n + wi * 16 + i]
            for (int xi = 0; xi < 2; ++xi) {
                const int64_t m0 = (b + xi) * kTile, rows = std::min(kTile, g.M - m0);
                if (rows <= 0) break;
                for (int wi = 0; wi < 2; ++wi) write_transposed(c[2 * wi + xi], g, m0, rows, n + wi * kTile);
            }
        }
    tiles_off();
}

bool detect_amx() {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    const bool tile = d & (1u << 24), bf16 = d & (1u << 22);
    if (!tile || !bf16) return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & (3u << 17)) != (3u << 17)) return false;  // XTILECFG and XTILEDATA enabled by the OS
    // Linux hands the 8 KiB tile state to a process only on request (ARCH_REQ_XCOMP_PERM).
    constexpr long kReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kReqXcompPerm, kXfeatureXtiledata) == 0;
}

}  // namespace

bool amx_available() {
    // Wherever the CPU and the OS offer it: Qwen2.5-0.5B prefill 512 on the 2-core Xeon VM 606.2 /
    // 635.8 tok/s against 321.5 / 353.6 on the packed kernel (docs/PERFORMANCE.md, session 9)
    static const bool ok = detect_amx();
    return ok;
}

int64_t gemm_amx(const GemmArgs& g, int threads) {
    if (g.wdt != RAD_BF16 || g.K % kStep != 0 || g.N < kBlock || g.M <= 0 || !amx_available()) return 0;
    const int64_t steps = g.K / kStep;
    const int64_t x_blocks = ((g.M + kTile - 1) / kTile + 1) / 2 * 2;  // even: tasks take blocks in pairs
    static thread_local std::vector<uint16_t> packed;
    packed.resize(static_cast<size_t>(x_blocks * steps * kParts * kTileElems));  // pack_blocks writes all of it
    uint16_t* xp = packed.data();  // the caller's buffer: `packed` is thread-local, the pack runs on the pool
    parallel_for(x_blocks, threads, [&](int64_t b) { pack_block(g, xp, steps, b); });

    const int64_t group_rows = std::clamp<int64_t>(kGroupBytes / (g.K * 2 * kParts) / kBlock * kBlock, kBlock, kMaxGroupRows);
    const Task t{&g, xp, steps, x_blocks, group_rows / kTile};
    const int64_t groups = (x_blocks + t.group_blocks - 1) / t.group_blocks, n_cols = g.N / kBlock * kBlock;
    // Slices of w: a few per thread over all groups, each a whole number of 32-row blocks.
    const int64_t col_blocks = n_cols / kBlock;
    const int64_t slices = std::min(col_blocks, std::max<int64_t>(1, (int64_t{threads} * 4 + groups - 1) / groups));
    const int64_t per_slice = (col_blocks + slices - 1) / slices * kBlock;
    parallel_for(groups * slices, threads, [&](int64_t task) {
        const int64_t gi = task % groups, s = task / groups;
        const int64_t n0 = s * per_slice, n1 = std::min(n_cols, n0 + per_slice);
        if (n0 < n1) run_task(t, gi, n0, n1);
    });
    return n_cols;
}

#else  // not x86-64: no AMX

bool amx_available() { return false; }
int64_t gemm_amx(const GemmArgs&, int) { return 0; }

#endif

}  // namespace cpu
