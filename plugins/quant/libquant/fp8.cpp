// fp8: OCP e4m3 codes (e4m3fn: bias 7, largest finite 448) times a scale, per output channel (a
// row) or per square block of `block` x `block` values (DeepSeek-V3 and transformers' fine-grained
// fp8 use 128). The affine scheme without a zero point: w = e4m3(code) * scale, the scale being the
// covered values' largest magnitude over 448 (rounded to its stored dtype first), the codes rounded
// to nearest even and saturated at +-448.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "options.h"
#include "quantizers.h"

namespace quant {
namespace {

const RadQuantOption kOptions[] = {
    {"block", RAD_P_INT, 0, "0", "0: a scale per row (per output channel); B > 0: a scale per B x B block"},
    {"scale", RAD_P_STR, 0, "f32", "dtype of the stored scales: f32, f16 or bf16"},
};
constexpr int kNOptions = sizeof kOptions / sizeof kOptions[0];
constexpr float kMax = 448.0f;

int encoding(const char*, int64_t rows, int64_t cols, const char* const* keys, const char* const* vals, int n, RadEncoding* out) {
    const Options o(kOptions, kNOptions, keys, vals, n);
    int64_t block = 0;
    const int sdt = float_dtype(o.text("scale"));
    if (!o.known() || !o.integer("block", &block) || block < 0 || sdt == RAD_DT_NONE) return RAD_E_ARG;
    if (rows < 0 || cols <= 0) return RAD_E_SHAPE;
    RadEncoding e = rad_encoding_affine(RAD_FP8_E4M3);
    if (block > 0)
        rad_encoding_add_tiled(&e, "scale", sdt, block, block);
    else
        rad_encoding_add_tiled(&e, "scale", sdt, 1, 0);  // one per row: the block is the whole row
    *out = e;
    return RAD_OK;
}

int64_t row_block(const RadEncoding* enc, int64_t, int64_t cols) {
    const int s = rad_encoding_plane(enc, "scale");
    return rows_per_block(cols, s >= 0 ? enc->planes[s].block_r : 1);  // whole blocks of rows
}

int quantize(const RadEncoding* enc, const RadQuantInput* in, void* const* planes) {
    const int codes = rad_encoding_plane(enc, "codes"), scale = rad_encoding_plane(enc, "scale");
    if (codes < 0 || scale < 0 || !in->data) return RAD_E_ARG;
    const RadPlaneDesc& sd = enc->planes[scale];
    const int64_t cols = in->cols, br = sd.block_r ? sd.block_r : in->rows, bc = sd.block_c ? sd.block_c : cols;
    if (in->r0 % br != 0) return RAD_E_SHAPE;  // a block of rows never straddles two calls
    const uint64_t cp = plane_pitch(enc->planes[codes], in->rows, cols), sp = plane_pitch(sd, in->rows, cols);
    for (int64_t b0 = 0; b0 < in->n_rows; b0 += br) {
        const int64_t b1 = std::min(in->n_rows, b0 + br);
        auto* srow = static_cast<uint8_t*>(planes[scale]) + (b0 / br) * sp;
        for (int64_t c0 = 0; c0 < cols; c0 += bc) {
            const int64_t c1 = std::min(cols, c0 + bc);
            float amax = 0.0f;
            for (int64_t i = b0; i < b1; ++i)
                for (int64_t k = c0; k < c1; ++k) amax = std::max(amax, std::fabs(in->data[i * cols + k]));
            const float s = round_to(sd.dtype, amax / kMax);
            rad_store_f32(sd.dtype, srow, c0 / bc, s);
            for (int64_t i = b0; i < b1; ++i) {
                auto* crow = static_cast<uint8_t*>(planes[codes]) + i * cp;
                for (int64_t k = c0; k < c1; ++k) crow[k] = s != 0.0f ? rad_f32_to_fp8_e4m3(in->data[i * cols + k] / s) : 0;
            }
        }
    }
    return RAD_OK;
}

}  // namespace

const RadQuantizerInfo kFp8 = {
    "fp8", "OCP fp8 e4m3 codes with a scale per row or per square block", kOptions, kNOptions, 0, encoding, row_block, quantize, nullptr};

}  // namespace quant
