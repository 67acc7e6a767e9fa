// A quantiser plugin for the loader tests: TQ_NAME is the plugin, TQ_QUANT the quantiser it names.
#include <radiance/rad_quant.h>

namespace {
int enc(const char*, int64_t, int64_t, const char* const*, const char* const*, int, RadEncoding* out) {
    *out = rad_encoding_plain(RAD_BF16);
    return RAD_OK;
}
const RadQuantizerInfo q[] = {{TQ_QUANT, "test quantiser", nullptr, 0, 0, enc, nullptr, nullptr, nullptr}};
}  // namespace

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT
extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_QUANT, TQ_NAME, "0.1", "loader test quantiser", ""};
    return &info;
}
RAD_EXPORT int rad_quant_count(void) { return 1; }
RAD_EXPORT const RadQuantizerInfo* rad_quant_at(int i) { return i == 0 ? &q[0] : nullptr; }
}
