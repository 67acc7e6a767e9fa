// options.h: a quantiser's options as the recipe gave them, with the defaults of its own table.
// The converter has already refused keys the table does not name; what is left here is reading
// values, and saying RAD_E_ARG for one that does not parse or is out of range.
#pragma once
#include <radiance/rad_quant.h>

#include <cstdint>
#include <string>

namespace quant {

class Options {
public:
    Options(const RadQuantOption* table, int n_table, const char* const* keys, const char* const* vals, int n);
    // The value given for `key`, else the table's default ("" when the table has no such key).
    std::string text(const char* key) const;
    // An integer option; false when its text is not a whole number.
    bool integer(const char* key, int64_t* out) const;
    // Whether every given key is in the table.
    bool known() const;

private:
    const RadQuantOption* table_;
    int n_table_;
    const char* const* keys_;
    const char* const* vals_;
    int n_;
};

// The float dtype an option names ("f32", "f16", "bf16"), or RAD_DT_NONE.
int float_dtype(const std::string& name);

// v rounded to `dt` (f32, f16 or bf16) and back: the value a stored scale will have.
float round_to(int dt, float v);

}  // namespace quant
