// rtn: round to nearest, int8 or int4, a scale per group of `group` columns of a row (0: one per
// row), symmetric or with a zero point per group. The affine scheme:
//
//   zero=0: codes i8 / i4, w = code * scale. The scale is m / -2^(bits-1), m the group's value of
//           largest magnitude, so m is exactly the most negative code and the whole signed range
//           is used (llama.cpp's Q8_0 / Q4_0 choice); a value of the other sign as large as m
//           clamps to 2^(bits-1) - 1.
//   zero=1: codes u8 / u4 and a zero point of the same width, w = (code - zero) * scale, over the
//           group's range widened to hold 0 (GPTQ's RTN), so the zero point is a code.
//
// The scale is rounded to its stored dtype first and the codes are computed from the rounded
// value, so what is stored is what was chosen.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "affine.h"
#include "options.h"
#include "quantizers.h"

namespace quant {
namespace {

const RadQuantOption kOptions[] = {
    {"bits", RAD_P_INT, 0, "8", "code width: 8 or 4"},
    {"group", RAD_P_INT, 0, "128", "columns one scale covers (must divide the row); 0: one scale per row"},
    {"zero", RAD_P_INT, 0, "0", "1: unsigned codes and a zero point per group; 0: symmetric signed codes"},
    {"scale", RAD_P_STR, 0, "f16", "dtype of the stored scales: f16, bf16 or f32"},
};
constexpr int kNOptions = sizeof kOptions / sizeof kOptions[0];

int encoding(const char*, int64_t rows, int64_t cols, const char* const* keys, const char* const* vals, int n, RadEncoding* out) {
    const Options o(kOptions, kNOptions, keys, vals, n);
    int64_t bits = 0, group = 0, zero = 0;
    if (!o.known() || !o.integer("bits", &bits) || !o.integer("group", &group) || !o.integer("zero", &zero)) return RAD_E_ARG;
    return affine_encoding(bits, group, zero, float_dtype(o.text("scale")), rows, cols, out);
}

int64_t row_block(const RadEncoding*, int64_t, int64_t cols) { return rows_per_block(cols, 1); }

int quantize(const RadEncoding* enc, const RadQuantInput* in, void* const* planes) {
    const int codes = rad_encoding_plane(enc, "codes"), scale = rad_encoding_plane(enc, "scale"), zero = rad_encoding_plane(enc, "zero");
    if (codes < 0 || scale < 0 || !in->data) return RAD_E_ARG;
    const int code_dt = enc->planes[codes].dtype, sdt = enc->planes[scale].dtype;
    const int bits = rad_dtype_bits(code_dt);
    const int64_t cols = in->cols, group = enc->planes[scale].block_c ? enc->planes[scale].block_c : cols;
    if (cols % group != 0) return RAD_E_SHAPE;
    const uint64_t cp = plane_pitch(enc->planes[codes], in->rows, cols), sp = plane_pitch(enc->planes[scale], in->rows, cols);
    const uint64_t zp = zero >= 0 ? plane_pitch(enc->planes[zero], in->rows, cols) : 0;
    const CodeRange range = code_range(bits, zero >= 0);
    for (int64_t i = 0; i < in->n_rows; ++i) {
        const float* x = in->data + i * cols;
        auto* crow = static_cast<uint8_t*>(planes[codes]) + i * cp;
        auto* srow = static_cast<uint8_t*>(planes[scale]) + i * sp;
        uint8_t* zrow = zero >= 0 ? static_cast<uint8_t*>(planes[zero]) + i * zp : nullptr;
        std::memset(crow, 0, cp);  // sub-byte rows: the padding bits are zero, not left over
        if (zrow) std::memset(zrow, 0, zp);
        for (int64_t g0 = 0; g0 < cols; g0 += group) {
            const AffineGroup g = affine_group(x + g0, group, bits, sdt, zrow != nullptr);
            rad_store_f32(sdt, srow, g0 / group, g.scale);
            if (zrow) rad_plane_store_bits(code_dt, zrow, g0 / group, static_cast<uint32_t>(g.zero));
            for (int64_t k = g0; k < g0 + group; ++k)
                rad_plane_store_bits(code_dt, crow, k, static_cast<uint32_t>(static_cast<int32_t>(affine_code(x[k], g, range))));
        }
    }
    return RAD_OK;
}

}  // namespace

const RadQuantizerInfo kRtn = {"rtn",     "round to nearest: int8 or int4 codes, a scale per group of columns, optionally a zero point",
                               kOptions,  kNOptions,
                               0,         encoding,
                               row_block, quantize,
                               nullptr};

}  // namespace quant
