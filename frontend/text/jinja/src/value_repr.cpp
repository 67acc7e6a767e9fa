// str() and repr() as Python prints them: templates that print a list, a dict, a bool or
// a float ({{ [1, 'a'] }}, {{ True }}, {{ 1.0 }}) must produce exactly Python's text.
#include <charconv>
#include <cmath>
#include <cstdio>

#include "radiance/jinja/error.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

std::string float_repr(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    // Shortest round-trip digits, then laid out with Python's rule: exponent notation
    // when the decimal point position is <= -4 or > 16, else fixed with at least ".0".
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    std::string out;
    size_t pos = 0;
    if (sci[0] == '-') {
        out.push_back('-');
        pos = 1;
    }
    const size_t e_pos = sci.find('e');
    std::string digits;
    for (size_t i = pos; i < e_pos; ++i)
        if (sci[i] != '.') digits.push_back(sci[i]);
    const int exponent = std::stoi(sci.substr(e_pos + 1));
    const int decpt = exponent + 1;
    const int ndigits = static_cast<int>(digits.size());
    if (decpt <= -4 || decpt > 16) {
        out.push_back(digits[0]);
        if (ndigits > 1) out += "." + digits.substr(1);
        char exp_buf[16];
        std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
        out += exp_buf;
    } else if (decpt <= 0) {
        out += "0." + std::string(-decpt, '0') + digits;
    } else if (decpt >= ndigits) {
        out += digits + std::string(decpt - ndigits, '0') + ".0";
    } else {
        out += digits.substr(0, decpt) + "." + digits.substr(decpt);
    }
    return out;
}

std::string repr_string(const std::string& s) {
    const bool has_single = s.find('\'') != std::string::npos;
    const bool has_double = s.find('"') != std::string::npos;
    const char quote = (has_single && !has_double) ? '"' : '\'';
    std::string out(1, quote);
    for (size_t pos = 0; pos < s.size();) {
        const char32_t c = next_code_point(s, pos);
        if (c == static_cast<char32_t>(quote) || c == '\\') {
            out.push_back('\\');
            out.push_back(static_cast<char>(c));
        } else if (c == '\n') {
            out += "\\n";
        } else if (c == '\r') {
            out += "\\r";
        } else if (c == '\t') {
            out += "\\t";
        } else if (is_printable_cp(c)) {
            append_utf8(out, c);
        } else {
            char buf[16];
            if (c < 0x100)
                std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
            else if (c < 0x10000)
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
            else
                std::snprintf(buf, sizeof buf, "\\U%08x", static_cast<unsigned>(c));
            out += buf;
        }
    }
    out.push_back(quote);
    return out;
}

namespace {
// Containers are depth-limited when built, but namespaces can chain them without
// bound (ns.x = [namespace(p=ns.x)] in a loop); count the recursion here too.
thread_local int repr_depth = 0;

struct ReprDepthGuard {
    ReprDepthGuard() {
        if (++repr_depth > 2 * kMaxValueDepth) {
            --repr_depth;
            throw Error(Error::Kind::Runtime, "value nested too deeply to print");
        }
    }
    ~ReprDepthGuard() { --repr_depth; }
};

void append_repr(std::string& out, const Value& v) {
    ReprDepthGuard guard;
    switch (v.kind()) {
    case Value::Kind::Undefined: out += "Undefined"; return;
    case Value::Kind::None: out += "None"; return;
    case Value::Kind::Bool: out += v.as_bool() ? "True" : "False"; return;
    case Value::Kind::Int: out += std::to_string(v.as_int()); return;
    case Value::Kind::Float: out += float_repr(v.as_float()); return;
    case Value::Kind::String: out += repr_string(v.as_string()); return;
    case Value::Kind::List: {
        const auto& items = v.as_list();
        if (v.seq_kind() == Value::SeqKind::Range) {  // range(0, 3), range(0, 9, 2)
            int64_t start, stop, step;
            v.range_params(start, stop, step);
            out += "range(" + std::to_string(start) + ", " + std::to_string(stop);
            if (step != 1) out += ", " + std::to_string(step);
            out += ")";
            return;
        }
        const bool view = !v.is_list_or_tuple();  // dict_keys([...]) and friends
        if (view) out += type_name(v) + "(";
        out.push_back(v.is_tuple() ? '(' : '[');
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out += ", ";
            append_repr(out, items[i]);
        }
        if (v.is_tuple() && items.size() == 1) out.push_back(',');
        out.push_back(v.is_tuple() ? ')' : ']');
        if (view) out.push_back(')');
        return;
    }
    case Value::Kind::Dict: {
        out.push_back('{');
        bool first = true;
        for (const auto& [k, val] : v.as_dict()) {
            if (!first) out += ", ";
            first = false;
            append_repr(out, k);
            out += ": ";
            append_repr(out, val);
        }
        out.push_back('}');
        return;
    }
    case Value::Kind::Object: out += v.as_object()->repr(); return;
    }
}
}  // namespace

void append_str(std::string& out, const Value& v) {
    if (v.is_string()) {
        out += v.as_string();
    } else if (!v.is_undefined()) {
        append_repr(out, v);
    }
}

std::string to_str(const Value& v) {
    std::string out;
    append_str(out, v);
    return out;
}

std::string to_repr(const Value& v) {
    std::string out;
    append_repr(out, v);
    return out;
}

}  // namespace radiance::jinja::detail
