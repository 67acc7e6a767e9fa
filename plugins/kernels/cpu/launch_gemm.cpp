// launch_gemm.cpp: the gemm rows, plain and quantised (gemm_q: the same split, its own decode
// kernel, and the packed prefill kernel over blocks of the weight dequantised as it goes).
// cpu_gemm_decode (M <= 8) splits only N, so every weight
// row is streamed from memory once for all M rows. cpu_gemm (any M; up to kRowWalkRows as
// decode) runs bf16 weights on AMX tiles where the CPU has them (gemm_amx.cpp), else packs x
// once, then splits y into groups of m-tiles by slices of N for the packed kernel. At level 3
// (AVX512_BF16, opt-in) bf16 weights go through the dot-product kernel over x split exactly into
// three bf16 parts, in blocks of kMBlock rows.
#include <cstring>
#include <vector>

#include "deterministic.h"
#include "gemm_amx.h"
#include "launch_util.h"

namespace {

using namespace cpu;

// Rows of x per block of the level-3 gemm.
constexpr int64_t kMBlock = 128;
// Slices of w for the packed gemm: multiples of 12 rows (every register tile's height divides
// 12), at most 288 (a 288 x 256 f32 K block of w is 288 KiB, in L2); groups of at most 512 rows
// of x (the transposed y block of a task, 288 x 512 f32, stays 576 KiB).
constexpr int64_t kSliceUnit = 12, kMaxSliceUnits = 24, kMaxGroupRows = 512;
// Rows of x per task of the blocked walk (--deterministic past 8 rows): its partials buffer is
// 64 x 48 outputs x 2W floats (196 KiB at AVX2, 393 at AVX-512), within L2.
constexpr int64_t kWalkBlockRows = 64;
// ... and gemm_q's (body_gemm_q_walk.inc), whose K block of weight rows is widened into a panel
// once a task: 128 rather than 64 rows halve that (2-core VM, int8 demo shape, prefill 512 under
// --deterministic: 203 / 229 -> 233 / 241 tok/s).
constexpr int64_t kQWalkBlockRows = 128;

int read_gemm(const RadArgs* a, GemmArgs* g) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *bias = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!is_f32(x) || !w || !is_f32(y) || !is_float_dtype(w->dtype)) return RAD_E_DTYPE;
    if (bias && !is_float_dtype(bias->dtype)) return RAD_E_DTYPE;
    g->M = rad_args_geti(a, "M");
    g->N = rad_args_geti(a, "N");
    g->K = rad_args_geti(a, "K");
    if (w->rank != 2 || w->shape[0] != g->N || w->shape[1] != g->K || g->M < 0 || g->N < 0 || g->K < 0) return RAD_E_SHAPE;
    g->x = rows_in(x);
    g->w = w->data;
    g->wdt = w->dtype;
    g->bias = bias ? bias->data : nullptr;
    g->bdt = bias ? bias->dtype : RAD_F32;
    g->y = rows_out(y);
    g->xbf = nullptr;
    g->kpad = 0;
    g->q = nullptr;
    return RAD_OK;
}

// gemm_q's operands (docs/OPS.md): x, the codes, the scale, the zero point, the bias, y and the min.
int read_gemm_q(const RadArgs* a, GemmArgs* g, QuantW* q) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *scale = rad_arg_in(a, 2), *zero = rad_arg_in(a, 3),
                    *bias = rad_arg_in(a, 4);
    RadTensor* y = rad_arg_out(a, 5);
    const RadTensor* mins = rad_arg_in(a, 6);
    const int qt = rad_dtype_from_name(rad_args_gets_or(a, "qtype", "")), sdt = rad_dtype_from_name(rad_args_gets_or(a, "sdtype", ""));
    if (!is_f32(x) || !w || !scale || !is_f32(y) || w->dtype != qt || scale->dtype != sdt || !is_float_dtype(sdt)) return RAD_E_DTYPE;
    if ((zero && zero->dtype != qt) || (mins && mins->dtype != sdt) || (bias && !is_float_dtype(bias->dtype))) return RAD_E_DTYPE;
    g->M = rad_args_geti(a, "M");
    g->N = rad_args_geti(a, "N");
    g->K = rad_args_geti(a, "K");
    q->group = rad_args_geti(a, "group");
    q->group_rows = rad_args_geti(a, "group_rows");
    if (q->group <= 0 || q->group_rows <= 0 || w->rank != 2 || w->shape[0] != g->N || w->shape[1] != g->K || g->M < 0) return RAD_E_SHAPE;
    const int64_t sr = (g->N + q->group_rows - 1) / q->group_rows, sc = (g->K + q->group - 1) / q->group;
    if (scale->rank != 2 || scale->shape[0] != sr || scale->shape[1] != sc) return RAD_E_SHAPE;
    for (const RadTensor* t : {zero, mins})
        if (t && (t->rank != 2 || t->shape[0] != sr || t->shape[1] != sc)) return RAD_E_SHAPE;
    q->codes = static_cast<const uint8_t*>(w->data);
    q->qt = qt;
    q->code_pitch = static_cast<uint64_t>(rad_tensor_row_pitch(w));
    q->scale = static_cast<const uint8_t*>(scale->data);
    q->sdt = sdt;
    q->scale_pitch = static_cast<uint64_t>(rad_tensor_row_pitch(scale));
    q->zero = zero ? static_cast<const uint8_t*>(zero->data) : nullptr;
    q->zero_pitch = zero ? static_cast<uint64_t>(rad_tensor_row_pitch(zero)) : 0;
    q->min = mins ? static_cast<const uint8_t*>(mins->data) : nullptr;
    q->min_pitch = mins ? static_cast<uint64_t>(rad_tensor_row_pitch(mins)) : 0;
    g->x = rows_in(x);
    g->w = nullptr;
    g->wdt = kDtQuant;
    g->q = q;
    g->bias = bias ? bias->data : nullptr;
    g->bdt = bias ? bias->dtype : RAD_F32;
    g->y = rows_out(y);
    g->xbf = nullptr;
    g->kpad = 0;
    return RAD_OK;
}

// gemm_q's operand 7, `perm` (GPTQ act-order: stored column j is the weight's column perm[j]),
// copied into `perm` (empty: none; copied because the table lies in a mapping, maybe not 4-byte
// aligned). A value outside [0, K) is refused here, so nothing reads outside x (the engine checked
// at load that the table is a permutation).
int read_perm(const RadArgs* a, int64_t K, std::vector<int32_t>* perm) {
    const RadTensor* t = rad_arg_in(a, 7);
    perm->clear();
    if (!t) return RAD_OK;
    if (t->dtype != RAD_I32) return RAD_E_DTYPE;
    if (rad_tensor_elems(t) != K || t->rank > 2 || (t->rank == 2 && t->shape[0] != 1)) return RAD_E_SHAPE;
    perm->resize(static_cast<size_t>(K));
    std::memcpy(perm->data(), t->data, perm->size() * sizeof(int32_t));
    for (const int32_t p : *perm)
        if (p < 0 || p >= K) return RAD_E_ARG;
    return RAD_OK;
}

// K = 0: the sums are empty, y is the bias.
void empty_sum(const GemmArgs& g) {
    for (int64_t m = 0; m < g.M; ++m)
        for (int64_t n = 0; n < g.N; ++n) g.y.row(m)[n] = g.bias ? rad_load_f32(g.bdt, g.bias, n) : 0.0f;
}

using BlockFn = void (*)(const GemmArgs&, int64_t, int64_t, int64_t, int64_t);

void pack_rows(const GemmArgs& g, int64_t m0, int64_t m1) { kernels().pack_bf16(g, const_cast<uint16_t*>(g.xbf), m0, m1); }

// Level 3's bf16-dot kernel, after packing x (in parallel over rows) into `packed`.
BlockFn bf16dot_kernel(GemmArgs& g, std::vector<uint16_t>& packed) {
    const KernelTable& kt = kernels();
    g.kpad = (g.K + 31) / 32 * 32;
    packed.resize(static_cast<size_t>(g.M * 3 * g.kpad));
    g.xbf = packed.data();
    for_rows(g.M, static_cast<double>(g.K) * 4, pack_rows, g);
    return kt.gemm_bf16dot;
}

// Threads for a gemm of this size: one per 4 * kMinWorkPerThread multiply-adds, up to the pool.
int gemm_threads(const GemmArgs& g) {
    const double flops = 2.0 * static_cast<double>(g.M) * static_cast<double>(g.N) * static_cast<double>(g.K);
    return threads_for(flops, 4 * kMinWorkPerThread);
}

// y[m-block, n-slice] tasks; `m_block` rows per block (M for decode).
void run_blocks(const GemmArgs& g, BlockFn fn, int64_t m_block) {
    const int nr = 12;  // slices hold whole register tiles (the bf16-dot kernel's 4 rows of w)
    const int threads = gemm_threads(g);
    const int64_t m_blocks = (g.M + m_block - 1) / m_block;
    const int64_t tiles = (g.N + nr - 1) / nr;
    // Several tasks per thread (dynamic scheduling evens out a core taken by another process),
    // each at least 16 tiles (192 rows of w; in decode kDecodeMinTiles, 48 rows) wide; in
    // prefill at most 21 tiles (252 rows), so a slice's K block of w stays in L2 (252 x 512 x 4 B
    // = 504 KiB at f32).
    const int64_t want = std::max<int64_t>(1, (int64_t{threads} * 8 + m_blocks - 1) / m_blocks);
    const int64_t min_tiles = g.M <= kRowWalkRows ? kDecodeMinTiles : 16;
    int64_t slices = std::min<int64_t>(want, std::max<int64_t>(1, tiles / min_tiles));
    if (g.M > 8) slices = std::max<int64_t>(slices, (tiles + 20) / 21);
    if (m_blocks * slices < threads) slices = std::min<int64_t>(tiles, (threads + m_blocks - 1) / m_blocks);
    const int64_t per_slice = (tiles + slices - 1) / slices * nr;
    parallel_for(m_blocks * slices, threads, [&](int64_t t) {
        const int64_t mb = t % m_blocks, s = t / m_blocks;
        const int64_t m0 = mb * m_block, m1 = std::min(g.M, m0 + m_block);
        const int64_t n0 = s * per_slice, n1 = std::min(g.N, n0 + per_slice);
        if (m0 < m1 && n0 < n1) fn(g, m0, m1, n0, n1);
    });
}

struct PackJob {
    const GemmArgs* g;
    float* xt;
};
void pack_tiles(const PackJob& j, int64_t t0, int64_t t1) { kernels().pack_x(*j.g, j.xt, t0, t1); }

// The columns from `done` on that gemm_amx left (fewer than 32): the row-walk kernel, one task
// per block of 8 x rows.
void amx_tail(const GemmArgs& g, int64_t done) {
    const int64_t blocks = (g.M + 7) / 8;
    parallel_for(blocks, std::min<int>(gemm_threads(g), static_cast<int>(blocks)),
                 [&](int64_t b) { kernels().gemm(g, b * 8, std::min(g.M, b * 8 + 8), done, g.N); });
}

// Prefill: x packed once (in parallel over m-tiles), then (m-tile group, w slice) tasks.
void run_packed(const GemmArgs& g) {
    const KernelTable& kt = kernels();
    const int64_t mt = kt.packed_mt, kc = kt.packed_kc;
    const int64_t tiles = (g.M + mt - 1) / mt, kblocks = (g.K + kc - 1) / kc;
    static thread_local std::vector<float> xt;
    xt.resize(static_cast<size_t>(kblocks * tiles * kc * mt));
    for_rows(tiles, static_cast<double>(mt * g.K), pack_tiles, PackJob{&g, xt.data()});

    const int threads = gemm_threads(g);
    const int64_t units = (g.N + kSliceUnit - 1) / kSliceUnit;
    int64_t groups = (tiles * mt + kMaxGroupRows - 1) / kMaxGroupRows;
    // Slices: as wide as L2 allows, narrower when that leaves threads without a few tasks each.
    int64_t slices = std::max<int64_t>((units + kMaxSliceUnits - 1) / kMaxSliceUnits,
                                       std::min<int64_t>(units, (int64_t{threads} * 4 + groups - 1) / groups));
    if (groups * slices < int64_t{threads} * 2) groups = std::min<int64_t>(tiles, (int64_t{threads} * 2 + slices - 1) / slices);
    const int64_t per_slice = (units + slices - 1) / slices * kSliceUnit, per_group = (tiles + groups - 1) / groups;
    const float* packed = xt.data();
    parallel_for(groups * slices, threads, [&](int64_t t) {
        const int64_t gi = t % groups, s = t / groups;
        const int64_t t0 = gi * per_group, t1 = std::min(tiles, t0 + per_group);
        const int64_t n0 = s * per_slice, n1 = std::min(g.N, n0 + per_slice);
        if (t0 < t1 && n0 < n1) kt.gemm_packed(g, packed, t0, t1, n0, n1);
    });
}

int launch(const RadArgs* a, bool decode) {
    GemmArgs g;
    if (int rc = read_gemm(a, &g); rc != RAD_OK) return rc;
    if (g.M == 0 || g.N == 0) return RAD_OK;
    if (g.K == 0) return empty_sum(g), RAD_OK;
    const KernelTable& kt = kernels();
    // --deterministic: the row walk's order at every M, two accumulators a row: the walk itself
    // up to 8 rows (decode), its blocked form past them (deterministic.h says why this order and
    // not the packed kernel's). Mutations seen failing golden_bitwise_libcpu_*: two_acc left
    // false; the branch removed; gemm_walk's tiles summing both k-steps into partial 0. And
    // rad-avx-check's deterministic rows: its W-step into partial 1 (K = 1001).
    if (deterministic()) {
        g.two_acc = true;
        if (g.M <= 8)
            run_blocks(g, kt.gemm, g.M);
        else
            run_blocks(g, kt.gemm_walk, std::min<int64_t>(g.M, kWalkBlockRows));
        return RAD_OK;
    }
    if (kt.gemm_bf16dot && g.wdt == RAD_BF16) {  // level 3
        static thread_local std::vector<uint16_t> packed;
        run_blocks(g, bf16dot_kernel(g, packed), decode ? g.M : kMBlock);
    } else if (decode || g.M <= kRowWalkRows) {
        run_blocks(g, kt.gemm, g.M);
    } else if (const int64_t done = isa_level() >= kIsaAvx512 ? gemm_amx(g, gemm_threads(g)) : 0; done > 0) {
        if (done < g.N) amx_tail(g, done);
    } else {
        run_packed(g);
    }
    return RAD_OK;
}

// gemm_q: the decode kernel up to kRowWalkRows rows, the packed kernel past them (no AMX and no
// bf16 dots: the products are the dequantised weight's f32 ones), over x gathered by perm when
// the weight has one.
void run_q(const GemmArgs& g, bool walk) {
    // --deterministic past 8 rows: the walk's order, blocked (body_gemm_q_walk.inc). Mutation seen
    // failing golden_bitwise_libcpu_demo_int8/int4 and rad-avx-check's deterministic gemm_q rows:
    // its tiles summing both k-steps into partial 0.
    if (deterministic() && g.M > 8)
        run_blocks(g, kernels().gemm_q_walk, std::min<int64_t>(g.M, kQWalkBlockRows));
    else if (walk)
        run_blocks(g, kernels().gemm_q, std::min<int64_t>(g.M, kRowWalkRows));
    else
        run_packed(g);
}

int launch_q(const RadArgs* a, bool decode) {
    GemmArgs g;
    QuantW q;
    static thread_local std::vector<int32_t> perm;
    if (int rc = read_gemm_q(a, &g, &q); rc != RAD_OK) return rc;
    if (int rc = read_perm(a, g.K, &perm); rc != RAD_OK) return rc;
    if (g.M == 0 || g.N == 0) return RAD_OK;
    if (g.K == 0) return empty_sum(g), RAD_OK;
    // --deterministic: the row walk at every M; its order for a row (two accumulators a group)
    // does not depend on how many rows ride along (deterministic.h)
    const bool walk = deterministic() || decode || g.M <= kRowWalkRows;
    if (perm.empty()) return run_q(g, walk), RAD_OK;
    // x gathered by perm (x'[m][j] = x[m][perm[j]]), which then stands for x, so both kernels sum
    // the stored columns in order as they do without one; kMaxGroupRows rows at a time, so the
    // buffer stays small however long a prefill is (the rows of y are independent).
    static thread_local std::vector<float> xg;
    for (int64_t m0 = 0; m0 < g.M; m0 += kMaxGroupRows) {
        GemmArgs b = g;
        b.M = std::min(kMaxGroupRows, g.M - m0);
        xg.resize(static_cast<size_t>(b.M * g.K));
        for (int64_t m = 0; m < b.M; ++m) {
            const float* xr = g.x.row(m0 + m);
            float* o = xg.data() + m * g.K;
            for (int64_t j = 0; j < g.K; ++j) o[j] = xr[perm[static_cast<size_t>(j)]];
        }
        b.x = RowsIn{reinterpret_cast<const char*>(xg.data()), static_cast<int64_t>(g.K * sizeof(float))};
        b.y = RowsOut{g.y.base + m0 * g.y.pitch, g.y.pitch};
        run_q(b, walk);
    }
    return RAD_OK;
}

}  // namespace

int cpu_gemm(const RadArgs* a) { return launch(a, false); }
int cpu_gemm_decode(const RadArgs* a) { return launch(a, true); }
int cpu_gemm_q(const RadArgs* a) { return launch_q(a, false); }
int cpu_gemm_q_decode(const RadArgs* a) { return launch_q(a, true); }
