#include "batch_invariance.h"

#include <cstdio>
#include <cstring>

namespace avxcheck {
namespace {

// x and y's operand indices (docs/OPS.md: gemm x, w, bias, y; gemm_q x, codes, scale, zero, bias, y).
constexpr int kX = 0;
int y_index(const Case& c) { return c.op == "gemm" ? 3 : 5; }

// Row r of a [M, cols] operand as a [1, cols] one (its pitch kept).
Operand one_row(const Operand& o, int64_t r) {
    Operand one = o;
    one.shape[0] = 1;
    const auto at = o.bytes.begin() + static_cast<std::ptrdiff_t>(r * o.pitch);
    one.bytes.assign(at, at + o.pitch);
    return one;
}

}  // namespace

bool batch_invariance_applies(const Case& c) {
    return (c.op == "gemm" || c.op == "gemm_q") && c.expect == RAD_OK && c.params.at("M").i > 1;
}

std::string check_batch_invariance(const Case& c, const KernelLib& lib, const RadKernelInfo* row, const Params& derived) {
    const int64_t M = c.params.at("M").i;
    const int yi = y_index(c);
    const Operand& y = c.opds[static_cast<size_t>(yi)];
    const int64_t row_bytes = y.shape[1] * 4;
    const Outcome whole = launch(c, lib, row, derived);
    if (whole.rc != RAD_OK) return "the whole case returned " + std::to_string(whole.rc);
    for (int64_t r : {int64_t{0}, M / 2, M - 1}) {
        Case alone = c;
        alone.params["M"] = pint(1);
        alone.opds[kX] = one_row(c.opds[kX], r);
        alone.opds[static_cast<size_t>(yi)] = one_row(y, r);
        const Outcome got = launch(alone, lib, row, derived);
        if (got.rc != RAD_OK) return "row " + std::to_string(r) + " alone returned " + std::to_string(got.rc);
        const uint8_t* a = whole.buffers[static_cast<size_t>(yi)].data() + r * y.pitch;
        const uint8_t* b = got.buffers[static_cast<size_t>(yi)].data();
        if (std::memcmp(a, b, static_cast<size_t>(row_bytes)) != 0) {
            int64_t n = 0;
            while (n < y.shape[1] && std::memcmp(a + n * 4, b + n * 4, 4) == 0) ++n;
            float va, vb;
            std::memcpy(&va, a + n * 4, 4);
            std::memcpy(&vb, b + n * 4, 4);
            char msg[160];
            std::snprintf(msg, sizeof msg, "row %lld of %lld alone differs at column %lld: %.9g against %.9g in the batch",
                          static_cast<long long>(r), static_cast<long long>(M), static_cast<long long>(n), double(vb), double(va));
            return msg;
        }
    }
    return "";
}

}  // namespace avxcheck
