#include "options.h"

#include <cstdlib>
#include <cstring>

namespace quant {

Options::Options(const RadQuantOption* table, int n_table, const char* const* keys, const char* const* vals, int n)
    : table_(table), n_table_(n_table), keys_(keys), vals_(vals), n_(n) {}

std::string Options::text(const char* key) const {
    for (int i = n_ - 1; i >= 0; --i)  // a key given twice: the last wins, as on a command line
        if (std::strcmp(keys_[i], key) == 0) return vals_[i] ? vals_[i] : "";
    for (int i = 0; i < n_table_; ++i)
        if (std::strcmp(table_[i].key, key) == 0) return table_[i].deflt ? table_[i].deflt : "";
    return "";
}

bool Options::integer(const char* key, int64_t* out) const {
    const std::string t = text(key);
    if (t.empty()) return false;
    char* end = nullptr;
    const long long v = std::strtoll(t.c_str(), &end, 10);
    if (!end || *end) return false;
    *out = v;
    return true;
}

bool Options::known() const {
    for (int i = 0; i < n_; ++i) {
        bool found = false;
        for (int k = 0; k < n_table_ && !found; ++k) found = std::strcmp(keys_[i], table_[k].key) == 0;
        if (!found) return false;
    }
    return true;
}

int float_dtype(const std::string& name) {
    if (name == "f32") return RAD_F32;
    if (name == "f16") return RAD_F16;
    if (name == "bf16") return RAD_BF16;
    return RAD_DT_NONE;
}

float round_to(int dt, float v) {
    switch (dt) {
    case RAD_F16: return rad_f16_to_f32(rad_f32_to_f16(v));
    case RAD_BF16: return rad_bf16_to_f32(rad_f32_to_bf16(v));
    default: return v;
    }
}

}  // namespace quant
