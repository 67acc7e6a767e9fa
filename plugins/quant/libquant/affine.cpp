// affine.cpp: rtn's choice of a group's scale, zero point and codes (affine.h; rtn.cpp says why).
#include "affine.h"

#include <algorithm>
#include <cmath>

#include "options.h"
#include "quantizers.h"

namespace quant {

float round_even(float v) {
    const float f = std::floor(v), d = v - f;
    if (d > 0.5f) return f + 1.0f;
    if (d < 0.5f) return f;
    return std::fmod(f, 2.0f) == 0.0f ? f : f + 1.0f;
}

int affine_encoding(int64_t bits, int64_t group, int64_t zero, int sdt, int64_t rows, int64_t cols, RadEncoding* out) {
    if ((bits != 8 && bits != 4) || group < 0 || (zero != 0 && zero != 1) || sdt == RAD_DT_NONE) return RAD_E_ARG;
    if (rows < 0 || cols <= 0 || (group > 0 && cols % group != 0)) return RAD_E_SHAPE;
    const int code_dt = zero ? (bits == 8 ? RAD_U8 : RAD_U4) : (bits == 8 ? RAD_I8 : RAD_I4);
    RadEncoding e = rad_encoding_affine(code_dt);
    rad_encoding_add_tiled(&e, "scale", sdt, 1, group);
    if (zero) rad_encoding_add_tiled(&e, "zero", code_dt, 1, group);
    *out = e;
    return RAD_OK;
}

CodeRange code_range(int bits, bool zero) {
    if (zero) return {0.0f, static_cast<float>((1 << bits) - 1)};
    return {-static_cast<float>(1 << (bits - 1)), static_cast<float>((1 << (bits - 1)) - 1)};
}

AffineGroup affine_group(const float* x, int64_t n, int bits, int sdt, bool zero) {
    AffineGroup g;
    if (!zero) {
        float m = 0.0f;  // the value of largest magnitude (the first such)
        for (int64_t k = 0; k < n; ++k)
            if (std::fabs(x[k]) > std::fabs(m)) m = x[k];
        g.scale = round_to(sdt, m / -static_cast<float>(1 << (bits - 1)));
        return g;
    }
    float lo = 0.0f, hi = 0.0f;  // the range, widened to hold 0
    for (int64_t k = 0; k < n; ++k) {
        lo = std::min(lo, x[k]);
        hi = std::max(hi, x[k]);
    }
    const float qmax = static_cast<float>((1 << bits) - 1);
    g.scale = round_to(sdt, (hi - lo) / qmax);
    if (g.scale > 0.0f) g.zero = static_cast<int32_t>(std::clamp(round_even(-lo / g.scale), 0.0f, qmax));
    return g;
}

float affine_code(float v, const AffineGroup& g, CodeRange r) {
    float q = g.scale != 0.0f ? round_even(v / g.scale) : 0.0f;
    if (q != q) q = 0.0f;  // (the converter refuses non-finite weights; no UB if one slips through)
    return std::clamp(q + static_cast<float>(g.zero), r.lo, r.hi);
}

}  // namespace quant
