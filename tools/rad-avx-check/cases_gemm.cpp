// gemm cases: decode (M = 1..9, across the M <= 8 band of cpu_gemm_decode), short prompts on
// both sides of the row walk's limit (23-25 rows: blocks of 8 x rows over 16-row chunks of w,
// ragged in both), and prefill shapes of
// real models (Qwen2.5-0.5B: 896 / 4864 / vocab 151936; 2048; 4096), every weight dtype, bias,
// pitched views, and odd sizes that leave tails in every vector width and tile and cross the K
// blocks (256, 512), w slices (288 rows) and m groups (512 rows) of the prefill kernels.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "cases.h"

namespace avxcheck {
namespace {

void gemm(Gen& g, std::vector<Case>& out, int64_t M, int64_t N, int64_t K, int wdt, bool bias, int64_t x_pad = 0, int64_t y_pad = 0) {
    Case c;
    c.op = "gemm";
    c.label = "gemm M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) + " w=" + rad_dtype_name(wdt) +
              (bias ? " +bias" : "") + (x_pad || y_pad ? " pitch+" + std::to_string(x_pad) + "/" + std::to_string(y_pad) : "");
    c.params = {{"M", pint(M)}, {"N", pint(N)}, {"K", pint(K)}, {"wdtype", pstr(rad_dtype_name(wdt))}};
    c.opds.push_back(g.rows(M, K, x_pad));
    c.opds.push_back(g.weight(wdt, N, K));
    c.opds.push_back(bias ? g.vector(wdt, N) : absent());
    c.opds.push_back(as_output(g.rows(M, N, y_pad)));
    c.tol = kDot;
    out.push_back(std::move(c));
}

// gemm_q (docs/OPS.md): random codes of qtype (fp8 without its NaN codes), scales of sdt per
// group_rows x group block, a zero point for the unsigned codes (and for signed ones when asked:
// the encoding allows it though rtn never writes it). kquant: a GGUF K-quant's form instead, no
// zero point and a min of the scale's dtype and grouping (operand 6, after y). perm: GPTQ
// act-order's table (operand 7), a random permutation of the columns.
void gemm_q(Gen& g, std::vector<Case>& out, int64_t M, int64_t N, int64_t K, int qt, int sdt, int64_t group, int64_t group_rows,
            bool bias, int64_t x_pad = 0, int64_t y_pad = 0, bool signed_zero = false, bool kquant = false, bool perm = false) {
    const bool zero = kquant ? signed_zero : qt == RAD_U8 || qt == RAD_U4 || signed_zero;
    const int64_t sr = (N + group_rows - 1) / group_rows, sc = (K + group - 1) / group;
    Case c;
    c.op = "gemm_q";
    c.label = "gemm_q M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) + " " + rad_dtype_name(qt) + " " +
              std::to_string(group_rows) + "x" + std::to_string(group) + " s=" + rad_dtype_name(sdt) + (zero ? " +zero" : "") + (kquant ? " +min" : "") +
              (perm ? " +perm" : "") + (bias ? " +bias" : "") + (x_pad || y_pad ? " pitch+" + std::to_string(x_pad) + "/" + std::to_string(y_pad) : "");
    c.params = {{"M", pint(M)},       {"N", pint(N)},
                {"K", pint(K)},       {"qtype", pstr(rad_dtype_name(qt))},
                {"group", pint(group)}, {"group_rows", pint(group_rows)},
                {"sdtype", pstr(rad_dtype_name(sdt))}};
    auto codes = [&](int64_t rows, int64_t cols) {
        Operand o;
        o.dtype = qt;
        o.rank = 2;
        o.shape[0] = rows;
        o.shape[1] = cols;
        o.bytes.resize(static_cast<size_t>(rows) * rad_row_bytes(qt, static_cast<uint64_t>(cols)));
        for (auto& b : o.bytes) {
            b = static_cast<uint8_t>(g.below(256));
            if (qt == RAD_FP8_E4M3 && (b & 0x7f) == 0x7f) b ^= 0x08;
        }
        return o;
    };
    c.opds.push_back(g.rows(M, K, x_pad));
    c.opds.push_back(codes(N, K));
    c.opds.push_back(g.weight(sdt, sr, sc, 0.001f, 0.02f));
    c.opds.push_back(zero ? codes(sr, sc) : absent());
    c.opds.push_back(bias ? g.vector(RAD_BF16, N) : absent());
    c.opds.push_back(as_output(g.rows(M, N, y_pad)));
    if (kquant) c.opds.push_back(g.weight(sdt, sr, sc, 0.005f, 0.2f));  // about 8 steps of the scale: Q4_K's
    if (perm) {
        if (!kquant) c.opds.push_back(absent());
        std::vector<int32_t> p(static_cast<size_t>(K));
        std::iota(p.begin(), p.end(), 0);
        std::shuffle(p.begin(), p.end(), g.rng());
        c.opds.push_back(i32(p));
    }
    c.tol = kDot;
    out.push_back(std::move(c));
}

}  // namespace

void gemm_cases(Gen& g, std::vector<Case>& out) {
    for (int wdt : {RAD_BF16, RAD_F16, RAD_F32})
        for (int64_t M : {1, 3, 17, 64}) gemm(g, out, M, 896, 896, wdt, M == 3 || M == 17);
    for (int64_t M : {1, 3, 17, 64}) {
        gemm(g, out, M, 4864, 896, RAD_BF16, false);  // gate / up
        gemm(g, out, M, 896, 4864, RAD_BF16, false);  // down
    }
    for (int64_t M : {1, 17}) gemm(g, out, M, 128, 896, RAD_BF16, true);  // k / v projections
    for (int64_t M : {2, 5, 8, 9}) gemm(g, out, M, 896, 896, RAD_BF16, true);
    gemm(g, out, 3, 37, 1001, RAD_F32, true);
    gemm(g, out, 23, 37, 1001, RAD_BF16, true);
    gemm(g, out, 24, 896, 896, RAD_BF16, false);
    gemm(g, out, 25, 61, 896, RAD_F16, true);
    // AMX tiles where the CPU has them (bf16, K a multiple of 32): ragged x rows and w columns,
    // bias, and groups of 32 x rows at K = 4,864
    gemm(g, out, 40, 100, 64, RAD_BF16, true);
    gemm(g, out, 130, 96, 4864, RAD_BF16, true);
    gemm(g, out, 17, 37, 1001, RAD_F16, false);
    gemm(g, out, 1, 1, 7, RAD_BF16, false);
    gemm(g, out, 64, 5, 3, RAD_BF16, true);
    gemm(g, out, 7, 11, 33, RAD_BF16, true);
    gemm(g, out, 130, 100, 515, RAD_BF16, true);
    gemm(g, out, 129, 13, 1030, RAD_F32, false);
    gemm(g, out, 600, 300, 300, RAD_BF16, true);  // two m groups (512 rows), two w slices
    gemm(g, out, 40, 250, 257, RAD_F16, false);
    gemm(g, out, 17, 896, 896, RAD_BF16, true, 13, 7);
    gemm(g, out, 1, 896, 896, RAD_F16, false, 3, 0);
    gemm(g, out, 3, 2048, 2048, RAD_BF16, false);
    gemm(g, out, 17, 4096, 4096, RAD_BF16, false);
    gemm(g, out, 1, 151936, 896, RAD_BF16, false);  // the logits head
    // gemm_q: every code dtype through the decode kernel (M <= 8), the row walk past it (9, 17,
    // 24) and the packed kernel (25 on), scales per group of 128 (the presets), 32, per row (K)
    // and in 128 x 128 blocks, every scale dtype, bias, pitched views, and a K that crosses the
    // packed kernel's K blocks in the middle of a group
    for (int qt : {RAD_I8, RAD_U8, RAD_I4, RAD_U4, RAD_FP8_E4M3})
        for (int64_t M : {1, 3, 9, 17, 24, 25, 64}) gemm_q(g, out, M, 896, 896, qt, RAD_F16, 128, 1, M == 3 || M == 25);
    for (int64_t M : {1, 5, 30}) {
        gemm_q(g, out, M, 4864, 896, RAD_U4, RAD_F16, 128, 1, false);  // gate / up, int4 preset
        gemm_q(g, out, M, 896, 4864, RAD_I8, RAD_F16, 128, 1, false);  // down, int8 preset
        gemm_q(g, out, M, 896, 4864, RAD_FP8_E4M3, RAD_F32, 4864, 1, false);  // fp8 preset: per row
    }
    gemm_q(g, out, 2, 300, 640, RAD_FP8_E4M3, RAD_F32, 128, 128, true);  // blocks, ragged rows
    gemm_q(g, out, 130, 300, 640, RAD_FP8_E4M3, RAD_BF16, 128, 128, true);
    gemm_q(g, out, 7, 37, 96, RAD_I4, RAD_BF16, 32, 1, true);
    gemm_q(g, out, 600, 37, 96, RAD_U4, RAD_F32, 32, 1, false);  // two m groups, one ragged slice
    gemm_q(g, out, 40, 250, 384, RAD_U8, RAD_F32, 96, 1, true);  // K blocks of 256 end inside a group
    gemm_q(g, out, 17, 896, 896, RAD_I8, RAD_F16, 128, 1, true, 13, 7);
    gemm_q(g, out, 1, 896, 896, RAD_U4, RAD_F16, 128, 1, false, 3, 0);
    gemm_q(g, out, 1, 32000, 256, RAD_I8, RAD_F16, 128, 1, false);  // an int8 head
    for (int64_t M : {2, 40}) {  // zero points on signed codes and fp8
        gemm_q(g, out, M, 96, 256, RAD_I4, RAD_F32, 64, 1, false, 0, 0, true);
        gemm_q(g, out, M, 96, 256, RAD_I8, RAD_F32, 64, 1, false, 0, 0, true);
        gemm_q(g, out, M, 96, 256, RAD_FP8_E4M3, RAD_F32, 64, 1, false, 0, 0, true);
    }
    // GGUF K-quant imports (libquant's ggml): Q4_K u4 and Q5_K u8 codes with an f32 scale and min
    // per 32, Q6_K i8 codes with an f32 scale per 16 (the 8-bit rows' groups of 16), and a fused
    // projection of mixed parts (i8, per 16, a min); through decode, the row walk and packed
    for (int64_t M : {1, 5, 9, 30}) {
        gemm_q(g, out, M, 896, 4864, RAD_U4, RAD_F32, 32, 1, M == 5, 0, 0, false, true);
        gemm_q(g, out, M, 896, 1024, RAD_U8, RAD_F32, 32, 1, false, 0, 0, false, true);
        gemm_q(g, out, M, 896, 4864, RAD_I8, RAD_F32, 16, 1, M == 9);
        gemm_q(g, out, M, 1152, 896, RAD_I8, RAD_F32, 16, 1, false, 0, 0, false, true);
    }
    gemm_q(g, out, 17, 256, 512, RAD_U4, RAD_F32, 32, 1, true, 13, 7, false, true);  // pitched views
    gemm_q(g, out, 2, 96, 256, RAD_I8, RAD_F16, 16, 1, false, 0, 0, true, true);  // a zero point and a min
    // GPTQ act-order imports (the perm operand: x gathered by a random permutation), u4 with a
    // zero point and i4 (sym), through decode, the row walk and packed; with a min and pitched
    for (int64_t M : {1, 5, 9, 30}) {
        gemm_q(g, out, M, 896, 896, RAD_U4, RAD_F16, 128, 1, M == 5, 0, 0, false, false, true);
        gemm_q(g, out, M, 4864, 896, RAD_I4, RAD_F16, 128, 1, false, 0, 0, false, false, true);
    }
    gemm_q(g, out, 17, 256, 512, RAD_U4, RAD_F32, 32, 1, true, 13, 7, false, true, true);
    gemm_q(g, out, 1100, 37, 256, RAD_U4, RAD_F16, 128, 1, true, 0, 0, false, false, true);  // x gathered in blocks of 512 rows
    // a table value outside [0, K): both libraries refuse the launch, neither reads outside x
    gemm_q(g, out, 3, 64, 256, RAD_U4, RAD_F16, 128, 1, false, 0, 0, false, false, true);
    std::memcpy(out.back().opds.back().bytes.data(), "\xff\xff\xff\x7f", 4);
    out.back().label += " (out of range)";
    out.back().expect = RAD_E_ARG;
}

}  // namespace avxcheck
