// Filters on single values: default, int, float, abs, round, attr, filesizeformat.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "attributes.h"
#include "call_args.h"
#include "evaluator.h"
#include "filter_table.h"
#include "radiance/jinja/error.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {

Value f_default(Evaluator&, const Value& v, const Args& args) {
    auto a = bind_args("default", args, {{"default_value", Value("")}, {"boolean", Value(false)}});
    if (v.is_undefined() || (truthy(a[1]) && !truthy(v))) return a[0];
    return v;
}

// Python's int(text, base): surrounding whitespace, a sign, an optional base prefix,
// digits with single underscores between them.
bool parse_python_int(const std::string& text, int64_t base, int64_t& out) {
    std::string s = py_strip(text, nullptr, true, true);
    size_t i = 0;
    bool neg = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
    auto has_prefix = [&](char p) { return i + 1 < s.size() && s[i] == '0' && (s[i + 1] | 0x20) == p; };
    if (base == 0) {
        base = has_prefix('x') ? 16 : has_prefix('o') ? 8 : has_prefix('b') ? 2 : 10;
        if (base != 10) i += 2;
    } else if ((base == 16 && has_prefix('x')) || (base == 8 && has_prefix('o')) || (base == 2 && has_prefix('b'))) {
        i += 2;
        if (i < s.size() && s[i] == '_') ++i;
    }
    if (base < 2 || base > 36 || i >= s.size()) return false;
    std::string digits;
    for (; i < s.size(); ++i) {
        if (s[i] == '_') {
            if (digits.empty() || i + 1 >= s.size() || s[i + 1] == '_') return false;
            continue;
        }
        const char c = static_cast<char>(s[i] | 0x20);
        const int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'z') ? c - 'a' + 10 : 99;
        if (d >= base) return false;
        digits.push_back(s[i]);
    }
    if (digits.empty()) return false;
    errno = 0;
    const long long v = std::strtoll(digits.c_str(), nullptr, static_cast<int>(base));
    if (errno == ERANGE) return false;
    out = neg ? -v : v;
    return true;
}

// Python's float(text): whitespace, sign, decimal or exponent notation, inf and nan.
bool parse_python_float(const std::string& text, double& out) {
    std::string s = py_strip(text, nullptr, true, true);
    std::string clean;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '_') {
            const bool between_digits = i > 0 && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i - 1])) &&
                                        std::isdigit(static_cast<unsigned char>(s[i + 1]));
            if (!between_digits) return false;
            continue;
        }
        if (s[i] == 'x' || s[i] == 'X' || s[i] == 'p' || s[i] == 'P') return false;  // no hex floats in Python
        clean.push_back(s[i]);
    }
    if (clean.empty()) return false;
    char* end = nullptr;
    out = std::strtod(clean.c_str(), &end);
    return end == clean.c_str() + clean.size();
}

Value f_int(Evaluator&, const Value& v, const Args& args) {
    auto a = bind_args("int", args, {{"default", Value(0)}, {"base", Value(10)}});
    if (v.is_undefined()) fail_undefined(v);  // Undefined.__int__ raises
    if (v.is_int() || v.is_bool()) return Value(v.as_int());
    auto from_float = [&](double d) -> Value {
        if (std::isnan(d) || std::isinf(d) || std::fabs(d) >= 9.2e18) return a[0];
        return Value(static_cast<int64_t>(std::trunc(d)));
    };
    if (v.is_float()) return from_float(v.as_float());
    if (v.is_string()) {
        int64_t i = 0;
        if (parse_python_int(v.as_string(), int_arg("int", a[1]), i)) return Value(i);
        double d = 0;
        if (parse_python_float(v.as_string(), d)) return from_float(d);
    }
    return a[0];
}

Value f_float(Evaluator&, const Value& v, const Args& args) {
    auto a = bind_args("float", args, {{"default", Value(0.0)}});
    if (v.is_undefined()) fail_undefined(v);
    if (v.is_number()) return Value(v.as_float());
    double d = 0;
    if (v.is_string() && parse_python_float(v.as_string(), d)) return Value(d);
    return a[0];
}

Value f_abs(Evaluator&, const Value& v, const Args& a) {
    expect_no_args("abs", a);
    if (v.is_float()) return Value(std::fabs(v.as_float()));
    if (v.is_int() || v.is_bool()) {
        if (v.as_int() == INT64_MIN) throw Error(Error::Kind::Runtime, "integer overflow (template ints are 64-bit)");
        return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    }
    if (v.is_undefined()) fail_undefined(v);
    throw Error(Error::Kind::Runtime, "bad operand type for abs(): '" + type_name(v) + "'");
}

// Python's round(x, n) rounds the exact binary value half-to-even, which is what
// printf("%.*f") does in glibc too.
double py_round(double x, int64_t n) {
    if (std::isnan(x) || std::isinf(x)) return x;
    if (n >= 0 && n <= 300) {
        char buf[400];
        std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(n), x);
        return std::strtod(buf, nullptr);
    }
    if (n > 300) return x;
    const double p = std::pow(10.0, static_cast<double>(-n));
    return std::nearbyint(x / p) * p;
}

Value f_round(Evaluator&, const Value& v, const Args& args) {
    auto a = bind_args("round", args, {{"precision", Value(0)}, {"method", Value("common")}});
    const std::string method = to_str(a[1]);
    if (method != "common" && method != "ceil" && method != "floor")
        throw Error(Error::Kind::Runtime, "method must be common, ceil or floor");
    const int64_t precision = int_arg("round", a[0]);
    if (v.is_undefined()) fail_undefined(v);
    if (!v.is_number()) throw Error(Error::Kind::Runtime, "type " + type_name(v) + " doesn't define __round__ method");
    if (method == "common") {
        if (!v.is_float()) {  // round(int, n) stays an int
            if (precision >= 0) return Value(v.as_int());
            const double r = py_round(static_cast<double>(v.as_int()), precision);
            return Value(static_cast<int64_t>(r));
        }
        return Value(py_round(v.as_float(), precision));
    }
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double scaled = v.as_float() * scale;
    return Value((method == "ceil" ? std::ceil(scaled) : std::floor(scaled)) / scale);
}

Value f_attr(Evaluator&, const Value& v, const Args& args) {
    auto a = bind_args("attr", args, {{"name", Value(), true}});
    const std::string name = to_str(a[0]);
    // Only real attributes: unlike x.name, a dict's keys are not consulted.
    if (v.is_dict()) {
        Value m = dict_method(v, name);
        return m.is_undefined() && m.undefined_hint().empty() ? Value::undefined("'dict object' has no attribute '" + name + "'") : m;
    }
    return get_attribute(v, name);
}

Value f_filesizeformat(Evaluator&, const Value& v, const Args& args) {
    auto a = bind_args("filesizeformat", args, {{"binary", Value(false)}});
    double bytes = 0;
    if (v.is_number()) {
        bytes = v.as_float();
    } else if (!v.is_string() || !parse_python_float(v.as_string(), bytes)) {
        throw Error(Error::Kind::Runtime, "could not convert " + type_name(v) + " to float");
    }
    const bool binary = truthy(a[0]);
    const double base = binary ? 1024 : 1000;
    static const char* dec[] = {"kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"};
    static const char* bin[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
    if (bytes == 1) return Value("1 Byte");
    if (bytes < base) return Value(std::to_string(static_cast<int64_t>(bytes)) + " Bytes");
    char buf[64];
    double unit = base;
    for (int i = 0; i < 8; ++i) {
        unit *= base;
        if (bytes < unit || i == 7) {
            std::snprintf(buf, sizeof buf, "%.1f %s", base * bytes / unit, binary ? bin[i] : dec[i]);
            break;
        }
    }
    return Value(std::string(buf));
}

}  // namespace

void add_value_filters(FilterTable& t) {
    t["default"] = f_default;
    t["d"] = f_default;
    t["int"] = f_int;
    t["float"] = f_float;
    t["abs"] = f_abs;
    t["round"] = f_round;
    t["attr"] = f_attr;
    t["filesizeformat"] = f_filesizeformat;
}

}  // namespace radiance::jinja::detail
