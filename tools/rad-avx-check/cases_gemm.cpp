// gemm cases: decode (M = 1..9, across the M <= 8 band of cpu_gemm_decode), short prompts on
// both sides of the row walk's limit (23-25 rows: blocks of 8 x rows over 16-row chunks of w,
// ragged in both), and prefill shapes of
// real models (Qwen2.5-0.5B: 896 / 4864 / vocab 151936; 2048; 4096), every weight dtype, bias,
// pitched views, and odd sizes that leave tails in every vector width and tile and cross the K
// blocks (256, 512), w slices (288 rows) and m groups (512 rows) of the prefill kernels.
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
}

}  // namespace avxcheck
