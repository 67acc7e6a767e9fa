#include <cstring>
#include <string>

#include "radiance/core/registry.h"

namespace radiance::core {
namespace {
bool eq(const char* a, const char* b) { return (a && b) ? std::strcmp(a, b) == 0 : a == b; }
}  // namespace

bool same_schema(const RadOpSchema& a, const RadOpSchema& b, std::string* diff) {
    auto say = [&](const std::string& s) {
        if (diff) *diff = s;
        return false;
    };
    if (a.n_params != b.n_params)
        return say(std::to_string(a.n_params) + " parameters vs " + std::to_string(b.n_params));
    for (int i = 0; i < a.n_params; ++i) {
        const RadParamSpec &x = a.params[i], &y = b.params[i];
        if (!eq(x.name, y.name) || x.type != y.type || x.need != y.need || x.role != y.role)
            return say("parameter " + std::to_string(i) + " is '" + (x.name ? x.name : "") + "' vs '" +
                       (y.name ? y.name : "") + "' (or its type, need or role differs)");
    }
    if (a.n_operands != b.n_operands)
        return say(std::to_string(a.n_operands) + " operands vs " + std::to_string(b.n_operands));
    for (int i = 0; i < a.n_operands; ++i) {
        const RadOperandSpec &x = a.operands[i], &y = b.operands[i];
        if (!eq(x.name, y.name) || x.role != y.role || x.optional != y.optional)
            return say("operand " + std::to_string(i) + " is '" + (x.name ? x.name : "") + "' vs '" +
                       (y.name ? y.name : "") + "' (or its role or optionality differs)");
    }
    return true;
}

}  // namespace radiance::core
