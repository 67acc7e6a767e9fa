// libquant: the bundled quantisers. Each writes the canonical planes of the plain or affine
// scheme, which the core decodes itself, so none needs a decode hook (ggml imports a GGUF's
// tensors into those same planes).
#include "quantizers.h"

namespace quant {

int64_t rows_per_block(int64_t cols, int64_t unit) {
    const int64_t want = (int64_t{1} << 22) / (cols > 0 ? cols : 1);
    const int64_t u = unit > 0 ? unit : 1;
    return want >= u ? want / u * u : u;
}

uint64_t plane_pitch(const RadPlaneDesc& p, int64_t rows, int64_t cols) {
    int64_t r = 0, c = 0;
    rad_plane_extent(&p, rows, cols, &r, &c);
    return rad_row_bytes(p.dtype, static_cast<uint64_t>(c));
}

}  // namespace quant

namespace {
const RadQuantizerInfo* const kAll[] = {&quant::kRtn, &quant::kFp8, &quant::kCast, &quant::kGptq, &quant::kGgml, &quant::kImport};
}

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT
extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_QUANT, "libquant", "0.1", "round-to-nearest and GPTQ int8/int4, fp8 e4m3, float casts, GGUF and Hugging Face quantised imports", ""};
    return &info;
}
RAD_EXPORT int rad_quant_count(void) { return static_cast<int>(sizeof kAll / sizeof kAll[0]); }
RAD_EXPORT const RadQuantizerInfo* rad_quant_at(int i) { return i >= 0 && i < rad_quant_count() ? kAll[i] : nullptr; }
}
