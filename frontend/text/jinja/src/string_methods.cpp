// Python str methods templates call: "x".startswith(...), .split(), .strip(), ...
// Indices and lengths count code points, as Python does.
#include <algorithm>
#include <unordered_map>

#include "attributes.h"
#include "call_args.h"
#include "evaluator.h"
#include "py_strings.h"
#include "radiance/jinja/error.h"
#include "runtime_objects.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {

using Method = Value (*)(Evaluator& ev, const std::string& self, const Args& args);

[[noreturn]] void value_error(const std::string& msg) { throw Error(Error::Kind::Runtime, msg); }

// Resolves optional start/end arguments the way str.find(sub, start, end) does.
std::pair<size_t, size_t> bounds(const Value& start_v, const Value& end_v, size_t len) {
    auto clamp = [&](const Value& v, int64_t dflt) -> size_t {
        int64_t i = (v.is_none() || v.is_undefined()) ? dflt : int_arg("slice", v);
        if (i < 0) i = std::max<int64_t>(0, i + static_cast<int64_t>(len));
        return static_cast<size_t>(std::min<int64_t>(i, static_cast<int64_t>(len)));
    };
    return {clamp(start_v, 0), clamp(end_v, static_cast<int64_t>(len))};
}

// Prefix/suffix tests accept a string or a tuple of strings.
Value affix_test(const std::string& self, const Args& args, bool prefix, const char* fn) {
    auto a = bind_args(fn, args, {{"prefix", Value(), true}, {"start", Value::none()}, {"end", Value::none()}});
    const std::u32string cps = to_u32(self);
    const auto [b0, e0] = bounds(a[1], a[2], cps.size());
    const size_t b = b0, e = e0;  // the lambda below captures these (clang 14 cannot capture bindings)
    const std::u32string_view window = b <= e ? std::u32string_view(cps).substr(b, e - b) : std::u32string_view();
    auto check = [&](const Value& affix) {
        const std::u32string x = to_u32(string_arg(fn, affix));
        if (b > e || x.size() > window.size()) return false;
        return prefix ? window.substr(0, x.size()) == x : window.substr(window.size() - x.size()) == x;
    };
    if (a[0].is_list() && a[0].is_tuple()) {
        for (const Value& v : a[0].as_list())
            if (check(v)) return Value(true);
        return Value(false);
    }
    return Value(check(a[0]));
}

Value m_startswith(Evaluator&, const std::string& s, const Args& a) { return affix_test(s, a, true, "startswith"); }
Value m_endswith(Evaluator&, const std::string& s, const Args& a) { return affix_test(s, a, false, "endswith"); }

Value strip_impl(const std::string& s, const Args& args, bool left, bool right, const char* fn) {
    auto a = bind_args(fn, args, {{"chars", Value::none()}});
    if (a[0].is_none()) return Value(py_strip(s, nullptr, left, right));
    const std::u32string chars = to_u32(string_arg(fn, a[0]));
    return Value(py_strip(s, &chars, left, right));
}
Value m_strip(Evaluator&, const std::string& s, const Args& a) { return strip_impl(s, a, true, true, "strip"); }
Value m_lstrip(Evaluator&, const std::string& s, const Args& a) { return strip_impl(s, a, true, false, "lstrip"); }
Value m_rstrip(Evaluator&, const std::string& s, const Args& a) { return strip_impl(s, a, false, true, "rstrip"); }

ValueList split_whitespace(const std::u32string& cps, int64_t maxsplit, bool from_right) {
    std::vector<std::u32string> parts;
    if (!from_right) {
        size_t i = 0;
        const size_t n = cps.size();
        while (true) {
            while (i < n && is_py_space(cps[i])) ++i;
            if (i == n) break;
            if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
                parts.push_back(cps.substr(i));
                break;
            }
            size_t j = i;
            while (j < n && !is_py_space(cps[j])) ++j;
            parts.push_back(cps.substr(i, j - i));
            i = j;
        }
    } else {
        size_t i = cps.size();
        while (true) {
            while (i > 0 && is_py_space(cps[i - 1])) --i;
            if (i == 0) break;
            if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
                parts.push_back(cps.substr(0, i));
                break;
            }
            size_t j = i;
            while (j > 0 && !is_py_space(cps[j - 1])) --j;
            parts.push_back(cps.substr(j, i - j));
            i = j;
        }
        std::reverse(parts.begin(), parts.end());
    }
    ValueList out;
    for (const auto& p : parts) out.emplace_back(to_utf8(p));
    return out;
}

ValueList split_on(const std::string& s, const std::string& sep, int64_t maxsplit, bool from_right) {
    std::vector<std::string> parts;
    if (!from_right) {
        size_t start = 0;
        while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
            const size_t at = s.find(sep, start);
            if (at == std::string::npos) break;
            parts.push_back(s.substr(start, at - start));
            start = at + sep.size();
        }
        parts.push_back(s.substr(start));
    } else {
        size_t end = s.size();
        while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
            if (end < sep.size()) break;
            const size_t at = s.rfind(sep, end - sep.size());
            if (at == std::string::npos) break;
            parts.push_back(s.substr(at + sep.size(), end - at - sep.size()));
            end = at;
        }
        parts.push_back(s.substr(0, end));
        std::reverse(parts.begin(), parts.end());
    }
    ValueList out;
    for (auto& p : parts) out.emplace_back(std::move(p));
    return out;
}

Value split_impl(Evaluator& ev, const std::string& s, const Args& args, bool from_right, const char* fn) {
    auto a = bind_args(fn, args, {{"sep", Value::none()}, {"maxsplit", Value(-1)}});
    const int64_t maxsplit = int_arg(fn, a[1]);
    ValueList parts;
    if (a[0].is_none()) {
        parts = split_whitespace(to_u32(s), maxsplit, from_right);
    } else {
        const std::string& sep = string_arg(fn, a[0]);
        if (sep.empty()) value_error("empty separator");
        parts = split_on(s, sep, maxsplit, from_right);
    }
    ev.check_list_size(parts.size());
    return Value::list(std::move(parts));
}
Value m_split(Evaluator& ev, const std::string& s, const Args& a) { return split_impl(ev, s, a, false, "split"); }
Value m_rsplit(Evaluator& ev, const std::string& s, const Args& a) { return split_impl(ev, s, a, true, "rsplit"); }

Value m_splitlines(Evaluator&, const std::string& s, const Args& args) {
    auto a = bind_args("splitlines", args, {{"keepends", Value(false)}});
    ValueList out;
    for (auto& line : py_splitlines(s, truthy(a[0]))) out.emplace_back(std::move(line));
    return Value::list(std::move(out));
}

Value m_upper(Evaluator&, const std::string& s, const Args& a) {
    expect_no_args("upper", a);
    return Value(py_upper(s));
}
Value m_lower(Evaluator&, const std::string& s, const Args& a) {
    expect_no_args("lower", a);
    return Value(py_lower(s));
}
Value m_casefold(Evaluator&, const std::string& s, const Args& a) {
    expect_no_args("casefold", a);
    return Value(py_lower(s));
}

Value m_title(Evaluator&, const std::string& s, const Args& a) {
    expect_no_args("title", a);
    return Value(py_title(s));
}

Value m_capitalize(Evaluator&, const std::string& s, const Args& a) {
    expect_no_args("capitalize", a);
    return Value(py_capitalize(s));
}

Value m_swapcase(Evaluator&, const std::string& s, const Args& a) {
    expect_no_args("swapcase", a);
    std::string out;
    for (size_t pos = 0; pos < s.size();) {
        const char32_t c = next_code_point(s, pos);
        const char32_t up = to_upper_cp(c);
        append_utf8(out, up != c ? up : to_lower_cp(c));
    }
    return Value(out);
}

Value m_replace(Evaluator& ev, const std::string& s, const Args& args) {
    auto a = bind_args("replace", args, {{"old", Value(), true}, {"new", Value(), true}, {"count", Value(-1)}});
    return Value(py_replace(ev, s, string_arg("replace", a[0]), string_arg("replace", a[1]), int_arg("replace", a[2])));
}

// find/rfind/index/rindex/count share the (sub, start, end) signature.
struct Search {
    std::u32string hay;
    std::u32string sub;
    size_t begin;
    size_t end;
};
Search search_args(const std::string& s, const Args& args, const char* fn) {
    auto a = bind_args(fn, args, {{"sub", Value(), true}, {"start", Value::none()}, {"end", Value::none()}});
    Search r{to_u32(s), to_u32(string_arg(fn, a[0])), 0, 0};
    std::tie(r.begin, r.end) = bounds(a[1], a[2], r.hay.size());
    return r;
}

int64_t find_impl(const std::string& s, const Args& args, bool reverse, const char* fn) {
    Search r = search_args(s, args, fn);
    if (r.begin > r.end || r.sub.size() > r.end - r.begin) return -1;
    const std::u32string_view window = std::u32string_view(r.hay).substr(r.begin, r.end - r.begin);
    const size_t at = reverse ? window.rfind(r.sub) : window.find(r.sub);
    return at == std::u32string_view::npos ? -1 : static_cast<int64_t>(r.begin + at);
}
Value m_find(Evaluator&, const std::string& s, const Args& a) { return Value(find_impl(s, a, false, "find")); }
Value m_rfind(Evaluator&, const std::string& s, const Args& a) { return Value(find_impl(s, a, true, "rfind")); }
Value m_index(Evaluator&, const std::string& s, const Args& a) {
    const int64_t i = find_impl(s, a, false, "index");
    if (i < 0) value_error("substring not found");
    return Value(i);
}
Value m_rindex(Evaluator&, const std::string& s, const Args& a) {
    const int64_t i = find_impl(s, a, true, "rindex");
    if (i < 0) value_error("substring not found");
    return Value(i);
}

Value m_count(Evaluator&, const std::string& s, const Args& args) {
    Search r = search_args(s, args, "count");
    if (r.begin > r.end) return Value(0);
    const std::u32string_view window = std::u32string_view(r.hay).substr(r.begin, r.end - r.begin);
    if (r.sub.empty()) return Value(static_cast<int64_t>(window.size() + 1));
    int64_t n = 0;
    for (size_t at = window.find(r.sub); at != std::u32string_view::npos; at = window.find(r.sub, at + r.sub.size())) ++n;
    return Value(n);
}

Value m_join(Evaluator& ev, const std::string& s, const Args& args) {
    auto a = bind_args("join", args, {{"iterable", Value(), true}});
    std::string out;
    size_t i = 0;
    for (const Value& item : iterate(a[0])) {
        if (!item.is_string())
            throw Error(Error::Kind::Runtime,
                        "sequence item " + std::to_string(i) + ": expected str instance, " + type_name(item) + " found");
        if (i++) out += s;
        out += item.as_string();
        ev.check_string_size(out.size());
    }
    return Value(out);
}

Value partition_impl(const std::string& s, const Args& args, bool reverse, const char* fn) {
    auto a = bind_args(fn, args, {{"sep", Value(), true}});
    const std::string& sep = string_arg(fn, a[0]);
    if (sep.empty()) value_error("empty separator");
    const size_t at = reverse ? s.rfind(sep) : s.find(sep);
    if (at == std::string::npos)
        return reverse ? Value::tuple({Value(""), Value(""), Value(s)}) : Value::tuple({Value(s), Value(""), Value("")});
    return Value::tuple({Value(s.substr(0, at)), Value(sep), Value(s.substr(at + sep.size()))});
}
Value m_partition(Evaluator&, const std::string& s, const Args& a) { return partition_impl(s, a, false, "partition"); }
Value m_rpartition(Evaluator&, const std::string& s, const Args& a) { return partition_impl(s, a, true, "rpartition"); }

Value justify(Evaluator& ev, const std::string& s, const Args& args, char how, const char* fn) {
    auto a = bind_args(fn, args, {{"width", Value(), true}, {"fillchar", Value(" ")}});
    const int64_t width = int_arg(fn, a[0]);
    const std::u32string fill = to_u32(string_arg(fn, a[1]));
    if (fill.size() != 1) value_error("The fill character must be exactly one character long");
    const auto len = static_cast<int64_t>(code_point_count(s));
    if (width <= len) return Value(s);
    ev.check_string_size(static_cast<size_t>(width) * 4);
    const int64_t marg = width - len;
    int64_t left = 0;
    if (how == 'c') left = marg / 2 + (marg & width & 1);  // CPython's centering rule
    if (how == 'r') left = marg;
    std::u32string out(static_cast<size_t>(left), fill[0]);
    out += to_u32(s);
    out.append(static_cast<size_t>(marg - left), fill[0]);
    return Value(to_utf8(out));
}
Value m_ljust(Evaluator& ev, const std::string& s, const Args& a) { return justify(ev, s, a, 'l', "ljust"); }
Value m_rjust(Evaluator& ev, const std::string& s, const Args& a) { return justify(ev, s, a, 'r', "rjust"); }
Value m_center(Evaluator& ev, const std::string& s, const Args& a) { return justify(ev, s, a, 'c', "center"); }

Value m_zfill(Evaluator& ev, const std::string& s, const Args& args) {
    auto a = bind_args("zfill", args, {{"width", Value(), true}});
    const int64_t width = int_arg("zfill", a[0]);
    const auto len = static_cast<int64_t>(code_point_count(s));
    if (width <= len) return Value(s);
    ev.check_string_size(static_cast<size_t>(width));
    const bool sign = !s.empty() && (s[0] == '+' || s[0] == '-');
    std::string out = sign ? s.substr(0, 1) : "";
    out += std::string(static_cast<size_t>(width - len), '0');
    out += sign ? s.substr(1) : s;
    return Value(out);
}

template <bool (*Pred)(char32_t)>
Value all_chars(const std::string& s, const Args& a) {
    expect_no_args("is...", a);
    if (s.empty()) return Value(false);
    for (size_t pos = 0; pos < s.size();)
        if (!Pred(next_code_point(s, pos))) return Value(false);
    return Value(true);
}
bool is_alnum_cp(char32_t c) { return is_alpha_cp(c) || is_digit_cp(c); }
Value m_isdigit(Evaluator&, const std::string& s, const Args& a) { return all_chars<is_digit_cp>(s, a); }
Value m_isalpha(Evaluator&, const std::string& s, const Args& a) { return all_chars<is_alpha_cp>(s, a); }
Value m_isalnum(Evaluator&, const std::string& s, const Args& a) { return all_chars<is_alnum_cp>(s, a); }
Value m_isspace(Evaluator&, const std::string& s, const Args& a) { return all_chars<is_py_space>(s, a); }

// islower/isupper: at least one cased character and none of the other case.
Value case_check(const std::string& s, const Args& a, bool lower) {
    expect_no_args(lower ? "islower" : "isupper", a);
    bool any_cased = false;
    for (size_t pos = 0; pos < s.size();) {
        const char32_t c = next_code_point(s, pos);
        if (!is_cased(c)) continue;
        any_cased = true;
        if (lower ? to_lower_cp(c) != c : to_upper_cp(c) != c) return Value(false);
    }
    return Value(any_cased);
}
Value m_islower(Evaluator&, const std::string& s, const Args& a) { return case_check(s, a, true); }
Value m_isupper(Evaluator&, const std::string& s, const Args& a) { return case_check(s, a, false); }

Value m_removeprefix(Evaluator&, const std::string& s, const Args& args) {
    auto a = bind_args("removeprefix", args, {{"prefix", Value(), true}});
    const std::string& p = string_arg("removeprefix", a[0]);
    return Value(s.compare(0, p.size(), p) == 0 ? s.substr(p.size()) : s);
}
Value m_removesuffix(Evaluator&, const std::string& s, const Args& args) {
    auto a = bind_args("removesuffix", args, {{"suffix", Value(), true}});
    const std::string& x = string_arg("removesuffix", a[0]);
    const bool has = !x.empty() && s.size() >= x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
    return Value(has ? s.substr(0, s.size() - x.size()) : s);
}

Value m_format(Evaluator& ev, const std::string& s, const Args& a) { return Value(py_str_format(ev, s, a)); }

const std::unordered_map<std::string, Method>& methods() {
    static const std::unordered_map<std::string, Method> table = {
        {"startswith", m_startswith},
        {"endswith", m_endswith},
        {"strip", m_strip},
        {"lstrip", m_lstrip},
        {"rstrip", m_rstrip},
        {"split", m_split},
        {"rsplit", m_rsplit},
        {"splitlines", m_splitlines},
        {"upper", m_upper},
        {"lower", m_lower},
        {"casefold", m_casefold},
        {"title", m_title},
        {"capitalize", m_capitalize},
        {"swapcase", m_swapcase},
        {"replace", m_replace},
        {"find", m_find},
        {"rfind", m_rfind},
        {"index", m_index},
        {"rindex", m_rindex},
        {"count", m_count},
        {"join", m_join},
        {"partition", m_partition},
        {"rpartition", m_rpartition},
        {"ljust", m_ljust},
        {"rjust", m_rjust},
        {"center", m_center},
        {"zfill", m_zfill},
        {"isdigit", m_isdigit},
        {"isdecimal", m_isdigit},
        {"isnumeric", m_isdigit},
        {"isalpha", m_isalpha},
        {"isalnum", m_isalnum},
        {"isspace", m_isspace},
        {"islower", m_islower},
        {"isupper", m_isupper},
        {"removeprefix", m_removeprefix},
        {"removesuffix", m_removesuffix},
        {"format", m_format},
    };
    return table;
}

}  // namespace

Value string_method(const Value& self, const std::string& name) {
    const auto& table = methods();
    const auto it = table.find(name);
    if (it == table.end()) return Value();
    const Method m = it->second;
    return make_function(name, [self, m](Evaluator& ev, const Args& args) { return m(ev, self.as_string(), args); });
}

}  // namespace radiance::jinja::detail
