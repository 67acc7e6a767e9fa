#include "radiance/core/constraint.h"

namespace radiance::core {

bool in_constraint_set(const char* set, std::string_view word) {
    const std::string_view s = set ? set : "";
    size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && (s[i] == ' ' || s[i] == ',')) ++i;
        size_t j = i;
        while (j < s.size() && s[j] != ' ' && s[j] != ',') ++j;
        if (j > i && s.substr(i, j - i) == word) return true;
        i = j;
    }
    return false;
}

bool constraint_holds(const RadConstraint& c, int64_t v) {
    switch (c.op) {
    case RAD_C_EQ: return v == c.value;
    case RAD_C_LE: return v <= c.value;
    case RAD_C_GE: return v >= c.value;
    case RAD_C_DIV: return c.value != 0 && v % c.value == 0;
    case RAD_C_IN: return in_constraint_set(c.set, std::to_string(v));
    }
    return false;
}

namespace {

const char* op_text(int op) {
    switch (op) {
    case RAD_C_EQ: return "==";
    case RAD_C_LE: return "<=";
    case RAD_C_GE: return ">=";
    case RAD_C_DIV: return "%";
    case RAD_C_IN: return "in";
    }
    return "?";
}

}  // namespace

std::string describe_constraint(const RadConstraint& c) {
    const std::string key = c.key ? c.key : "?";
    if (c.op == RAD_C_IN) return key + " in {" + (c.set ? c.set : "") + "}";
    if (c.op == RAD_C_DIV) return key + " % " + std::to_string(c.value) + " == 0";
    return key + " " + op_text(c.op) + " " + std::to_string(c.value);
}

}  // namespace radiance::core
