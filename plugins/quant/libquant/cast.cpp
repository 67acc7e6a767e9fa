// cast: the weight as plain floats of another width (bf16, f16 or f32), rounded to nearest even.
// What a recipe says for norms, embeddings and whatever it leaves unquantised.
#include "options.h"
#include "quantizers.h"

namespace quant {
namespace {

const RadQuantOption kOptions[] = {
    {"dtype", RAD_P_STR, 0, "bf16", "the stored dtype: bf16, f16 or f32"},
};
constexpr int kNOptions = sizeof kOptions / sizeof kOptions[0];

int encoding(const char*, int64_t rows, int64_t cols, const char* const* keys, const char* const* vals, int n, RadEncoding* out) {
    const Options o(kOptions, kNOptions, keys, vals, n);
    const int dt = float_dtype(o.text("dtype"));
    if (!o.known() || dt == RAD_DT_NONE) return RAD_E_ARG;
    if (rows < 0 || cols < 0) return RAD_E_SHAPE;
    *out = rad_encoding_plain(dt);
    return RAD_OK;
}

int64_t row_block(const RadEncoding*, int64_t, int64_t cols) { return rows_per_block(cols, 1); }

int quantize(const RadEncoding* enc, const RadQuantInput* in, void* const* planes) {
    if (enc->n_planes != 1 || !in->data) return RAD_E_ARG;
    const int dt = enc->planes[0].dtype;
    const int64_t n = in->n_rows * in->cols;
    for (int64_t i = 0; i < n; ++i) rad_store_f32(dt, planes[0], i, in->data[i]);
    return RAD_OK;
}

}  // namespace

const RadQuantizerInfo kCast = {"cast",    "plain floats of another width (bf16, f16 or f32), rounded to nearest even",
                                kOptions,  kNOptions,
                                0,         encoding,
                                row_block, quantize,
                                nullptr};

}  // namespace quant
