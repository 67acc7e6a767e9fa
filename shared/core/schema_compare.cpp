#include <cstring>
#include <string>

#include "radiance/core/registry.h"

namespace radiance::core {
namespace {
bool eq(const char* a, const char* b) { return (a && b) ? std::strcmp(a, b) == 0 : a == b; }
std::string nm(const char* s) { return s ? s : "(null)"; }
const char* type_name(int t) { return t == RAD_P_INT ? "int" : t == RAD_P_F64 ? "f64" : t == RAD_P_STR ? "str" : "?"; }
const char* need_name(int n) { return n == RAD_REQUIRED ? "required" : n == RAD_OPTIONAL ? "optional" : "derived"; }
}  // namespace

bool same_schema(const RadOpSchema& a, const RadOpSchema& b, std::string* diff) {
    auto say = [&](const std::string& s) {
        if (diff) *diff = s;
        return false;
    };
    if (a.n_params != b.n_params) return say(std::to_string(a.n_params) + " parameters vs " + std::to_string(b.n_params));
    for (int i = 0; i < a.n_params; ++i) {
        const RadParamSpec &x = a.params[i], &y = b.params[i];
        std::string at = "parameter " + std::to_string(i) + " ";
        if (!eq(x.name, y.name)) return say(at + "is '" + nm(x.name) + "' vs '" + nm(y.name) + "'");
        if (x.type != y.type) return say(at + "'" + nm(x.name) + "' is " + type_name(x.type) + " vs " + type_name(y.type));
        if (x.need != y.need) return say(at + "'" + nm(x.name) + "' is " + need_name(x.need) + " vs " + need_name(y.need));
        if (x.role != y.role) return say(at + "'" + nm(x.name) + "' has another role");
    }
    if (a.n_operands != b.n_operands) return say(std::to_string(a.n_operands) + " operands vs " + std::to_string(b.n_operands));
    for (int i = 0; i < a.n_operands; ++i) {
        const RadOperandSpec &x = a.operands[i], &y = b.operands[i];
        std::string at = "operand " + std::to_string(i) + " ";
        if (!eq(x.name, y.name)) return say(at + "is '" + nm(x.name) + "' vs '" + nm(y.name) + "'");
        if (x.role != y.role) return say(at + "'" + nm(x.name) + "' has role " + std::to_string(x.role) + " vs " + std::to_string(y.role));
        if (x.optional != y.optional) return say(at + "'" + nm(x.name) + "' is optional in one and required in the other");
    }
    return true;
}

}  // namespace radiance::core
