#include "py_strings.h"

#include <cmath>
#include <cstdio>

#include "attributes.h"
#include "evaluator.h"
#include "radiance/jinja/error.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {

[[noreturn]] void format_error(const std::string& msg) { throw Error(Error::Kind::Runtime, msg); }

// Widths and precisions beyond this would only serve to exhaust memory.
constexpr int64_t kMaxFormatWidth = 1000000;

// Format specification shared by both styles: fill/align/sign/width/precision/type.
struct Spec {
    char32_t fill = ' ';
    char align = 0;  // '<', '>', '^', '=' or 0 for the type's default
    char sign = '-';
    bool alt = false;
    bool zero = false;
    int64_t width = -1;
    int64_t precision = -1;
    char grouping = 0;
    char type = 0;
};

std::string pad(const std::string& body, const Spec& spec, char default_align) {
    const auto len = static_cast<int64_t>(code_point_count(body));
    if (spec.width <= len) return body;
    const auto marg = static_cast<size_t>(spec.width - len);
    const char align = spec.align ? spec.align : default_align;
    std::string fill;
    append_utf8(fill, spec.fill);
    auto repeat = [&](size_t n) {
        std::string out;
        for (size_t i = 0; i < n; ++i) out += fill;
        return out;
    };
    if (align == '<') return body + repeat(marg);
    if (align == '^') return repeat(marg / 2) + body + repeat(marg - marg / 2);
    if (align == '=') {
        const size_t sign_len = (!body.empty() && (body[0] == '-' || body[0] == '+' || body[0] == ' ')) ? 1 : 0;
        return body.substr(0, sign_len) + repeat(marg) + body.substr(sign_len);
    }
    return repeat(marg) + body;
}

std::string group_digits(const std::string& digits, char sep) {
    std::string out;
    const size_t n = digits.size();
    for (size_t i = 0; i < n; ++i) {
        if (i && (n - i) % 3 == 0) out.push_back(sep);
        out.push_back(digits[i]);
    }
    return out;
}

std::string format_int(int64_t v, const Spec& spec) {
    const bool neg = v < 0;
    const uint64_t mag = neg ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
    std::string digits;
    char buf[80];
    switch (spec.type) {
    case 'x': std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(mag)); break;
    case 'X': std::snprintf(buf, sizeof buf, "%llX", static_cast<unsigned long long>(mag)); break;
    case 'o': std::snprintf(buf, sizeof buf, "%llo", static_cast<unsigned long long>(mag)); break;
    case 'b': {
        std::string b;
        for (uint64_t m = mag; m; m >>= 1) b.insert(b.begin(), static_cast<char>('0' + (m & 1)));
        std::snprintf(buf, sizeof buf, "%s", b.empty() ? "0" : b.c_str());
        break;
    }
    default: std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(mag));
    }
    digits = buf;
    if (spec.grouping) digits = group_digits(digits, spec.grouping);
    std::string prefix;
    if (spec.alt && (spec.type == 'x' || spec.type == 'X' || spec.type == 'o' || spec.type == 'b')) prefix = std::string("0") + spec.type;
    const std::string sign = neg ? "-" : spec.sign == '+' ? "+" : spec.sign == ' ' ? " " : "";
    return sign + prefix + digits;
}

std::string format_float(double v, const Spec& spec) {
    char type = spec.type;
    int64_t precision = spec.precision;
    std::string body;
    const bool neg = std::signbit(v) && !std::isnan(v);
    const double mag = std::fabs(v);
    if (type == 0 && precision < 0) {
        body = float_repr(mag);  // str(float)
    } else {
        bool percent = false;
        if (type == '%') {
            percent = true;
            type = 'f';
        }
        if (type == 0) type = 'g';  // Python's "general" with a precision
        if (precision < 0) precision = 6;
        char fmt[40];
        std::snprintf(fmt, sizeof fmt, "%%%s.%lld%c", spec.alt ? "#" : "", static_cast<long long>(precision), type);
        char buf[512];
        std::snprintf(buf, sizeof buf, fmt, percent ? mag * 100 : mag);
        body = buf;
        if (percent) body += "%";
    }
    if (spec.grouping) {
        size_t end = body.find_first_not_of("0123456789");
        if (end == std::string::npos) end = body.size();
        body = group_digits(body.substr(0, end), spec.grouping) + body.substr(end);
    }
    const std::string sign = neg ? "-" : spec.sign == '+' ? "+" : spec.sign == ' ' ? " " : "";
    return sign + body;
}

// ---- printf style -----------------------------------------------------------------
std::string percent_one(const Value& v, Spec spec, char conv) {
    switch (conv) {
    case 's':
    case 'r':
    case 'a': {
        std::string s = conv == 's' ? to_str(v) : to_repr(v);
        if (spec.precision >= 0) {
            const std::u32string cps = to_u32(s);
            if (static_cast<int64_t>(cps.size()) > spec.precision)
                s = to_utf8(std::u32string_view(cps).substr(0, static_cast<size_t>(spec.precision)));
        }
        return pad(s, spec, spec.align ? spec.align : '>');
    }
    case 'c': {
        std::string s;
        if (v.is_string() && code_point_count(v.as_string()) == 1) {
            s = v.as_string();
        } else if (v.is_int()) {
            append_utf8(s, static_cast<char32_t>(v.as_int()));
        } else {
            format_error("%c requires int or char");
        }
        return pad(s, spec, spec.align ? spec.align : '>');
    }
    default: break;
    }
    if (!v.is_number()) {
        if (v.is_undefined()) fail_undefined(v);
        format_error(std::string("%") + conv + " format: a real number is required, not " + type_name(v));
    }
    std::string body;
    if (conv == 'd' || conv == 'i' || conv == 'u' || conv == 'x' || conv == 'X' || conv == 'o') {
        spec.type = (conv == 'x' || conv == 'X' || conv == 'o') ? conv : 'd';
        const int64_t iv = v.is_float() ? static_cast<int64_t>(std::trunc(v.as_float())) : v.as_int();
        body = format_int(iv, spec);
        if (spec.precision >= 0) {  // %.3d pads digits with zeros
            const bool neg = body[0] == '-';
            std::string digits = body.substr(neg ? 1 : 0);
            if (static_cast<int64_t>(digits.size()) < spec.precision)
                digits.insert(0, static_cast<size_t>(spec.precision) - digits.size(), '0');
            body = (neg ? "-" : "") + digits;
        }
    } else {
        spec.type = conv;
        if (spec.precision < 0) spec.precision = 6;
        body = format_float(v.as_float(), spec);
    }
    return pad(body, spec, spec.align ? spec.align : '>');
}

}  // namespace

std::string py_replace(Evaluator& ev, const std::string& s, const std::string& old, const std::string& repl, int64_t count) {
    std::string out;
    if (old.empty()) {
        int64_t done = 0;
        for (size_t pos = 0;;) {
            if (count < 0 || done < count) {
                out += repl;
                ++done;
            }
            if (pos >= s.size()) break;
            const size_t start = pos;
            next_code_point(s, pos);
            out.append(s, start, pos - start);
            ev.check_string_size(out.size());
        }
        return out;
    }
    size_t start = 0;
    for (int64_t done = 0; count < 0 || done < count; ++done) {
        const size_t at = s.find(old, start);
        if (at == std::string::npos) break;
        out.append(s, start, at - start);
        out += repl;
        start = at + old.size();
        ev.check_string_size(out.size());
    }
    out.append(s, start);
    ev.check_string_size(out.size());
    return out;
}

std::string py_percent_format(Evaluator& ev, const std::string& fmt, const Value& args) {
    ValueList positional;
    const Value* mapping = nullptr;
    if (args.is_tuple()) {
        positional = args.as_list();
    } else if (args.is_dict()) {
        mapping = &args;
        positional = {args};
    } else {
        positional = {args};
    }
    size_t next = 0;
    bool used_mapping = false;
    std::string out;
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') {
            out.push_back(fmt[i]);
            continue;
        }
        if (++i >= fmt.size()) format_error("incomplete format");
        Value arg;
        bool have_arg = false;
        if (fmt[i] == '(') {
            const size_t close = fmt.find(')', i);
            if (close == std::string::npos) format_error("incomplete format key");
            if (!mapping) format_error("format requires a mapping");
            const Value* v = mapping->find(fmt.substr(i + 1, close - i - 1));
            if (!v) format_error("KeyError: '" + fmt.substr(i + 1, close - i - 1) + "'");
            arg = *v;
            have_arg = used_mapping = true;
            i = close + 1;
        }
        Spec spec;
        spec.align = '>';
        for (; i < fmt.size(); ++i) {
            const char c = fmt[i];
            if (c == '-')
                spec.align = '<';
            else if (c == '+')
                spec.sign = '+';
            else if (c == ' ')
                spec.sign = spec.sign == '+' ? '+' : ' ';
            else if (c == '#')
                spec.alt = true;
            else if (c == '0')
                spec.zero = true;
            else
                break;
        }
        auto take = [&]() -> Value {
            if (next >= positional.size()) format_error("not enough arguments for format string");
            return positional[next++];
        };
        auto number = [&]() -> int64_t {
            if (i < fmt.size() && fmt[i] == '*') {
                ++i;
                const int64_t n = take().as_int();
                if (n > kMaxFormatWidth) format_error("format width too large");
                return n;
            }
            int64_t n = 0;
            while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') {
                n = n * 10 + (fmt[i++] - '0');
                if (n > kMaxFormatWidth) format_error("format width too large");
            }
            return n;
        };
        if (i < fmt.size() && (fmt[i] == '*' || (fmt[i] >= '1' && fmt[i] <= '9'))) spec.width = number();
        if (i < fmt.size() && fmt[i] == '.') {
            ++i;
            spec.precision = number();
        }
        while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
        if (i >= fmt.size()) format_error("incomplete format");
        const char conv = fmt[i];
        if (conv == '%') {
            out.push_back('%');
            continue;
        }
        if (std::string_view("srcadiuoxXeEfFgG").find(conv) == std::string_view::npos)
            format_error(std::string("unsupported format character '") + conv + "'");
        if (spec.zero && spec.align == '>' && conv != 's' && conv != 'r' && conv != 'a' && conv != 'c') {
            spec.fill = '0';
            spec.align = '=';
        }
        if (!have_arg) arg = take();
        out += percent_one(arg, spec, conv);
        ev.check_string_size(out.size());
    }
    // Python skips this check for anything with __getitem__ (lists, undefined) except tuples.
    const bool mapping_like = args.is_dict() ||
                              (args.is_list() && (args.seq_kind() == Value::SeqKind::List || args.seq_kind() == Value::SeqKind::Range)) ||
                              args.is_undefined();
    if (!used_mapping && !mapping_like && next < positional.size()) format_error("not all arguments converted during string formatting");
    return out;
}

namespace {

Spec parse_spec(const std::string& s) {
    Spec spec;
    size_t i = 0;
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
    const std::u32string cps = to_u32(s);
    if (cps.size() >= 2 && cps[1] < 0x80 && is_align(static_cast<char>(cps[1]))) {
        spec.fill = cps[0];
        spec.align = static_cast<char>(cps[1]);
        i = 2;
    } else if (!cps.empty() && cps[0] < 0x80 && is_align(static_cast<char>(cps[0]))) {
        spec.align = static_cast<char>(cps[0]);
        i = 1;
    }
    const std::string rest = to_utf8(std::u32string_view(cps).substr(i));
    i = 0;
    if (i < rest.size() && (rest[i] == '+' || rest[i] == '-' || rest[i] == ' ')) spec.sign = rest[i++];
    if (i < rest.size() && rest[i] == '#') spec.alt = true, ++i;
    if (i < rest.size() && rest[i] == '0') {
        spec.zero = true;
        if (!spec.align) spec.fill = '0', spec.align = '=';
        ++i;
    }
    auto digits = [&]() {
        int64_t n = -1;
        while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') {
            n = (n < 0 ? 0 : n) * 10 + (rest[i++] - '0');
            if (n > kMaxFormatWidth) format_error("format width too large");
        }
        return n;
    };
    spec.width = digits();
    if (i < rest.size() && (rest[i] == ',' || rest[i] == '_')) spec.grouping = rest[i++];
    if (i < rest.size() && rest[i] == '.') {
        ++i;
        spec.precision = digits();
        if (spec.precision < 0) format_error("Format specifier missing precision");
    }
    if (i < rest.size()) spec.type = rest[i++];
    if (i != rest.size()) format_error("Invalid format specifier '" + s + "'");
    return spec;
}

std::string format_value(const Value& v, const std::string& spec_text) {
    if (spec_text.empty()) return to_str(v);
    Spec spec = parse_spec(spec_text);
    if (v.is_string() || v.is_none() || v.is_list() || v.is_dict()) {
        if (spec.type && spec.type != 's')
            format_error(std::string("Unknown format code '") + spec.type + "' for object of type '" + type_name(v) + "'");
        std::string s = v.is_string() ? v.as_string() : to_str(v);
        if (spec.precision >= 0) {
            const std::u32string cps = to_u32(s);
            if (static_cast<int64_t>(cps.size()) > spec.precision)
                s = to_utf8(std::u32string_view(cps).substr(0, static_cast<size_t>(spec.precision)));
        }
        return pad(s, spec, '<');
    }
    if (!v.is_number()) {
        if (v.is_undefined()) return pad("", spec, '<');
        format_error("unsupported format string passed to " + type_name(v) + ".__format__");
    }
    const bool float_type = spec.type && std::string_view("eEfFgG%").find(spec.type) != std::string_view::npos;
    if (v.is_float() || float_type) return pad(format_float(v.as_float(), spec), spec, '>');
    if (spec.type == 'c') {
        std::string s;
        append_utf8(s, static_cast<char32_t>(v.as_int()));
        return pad(s, spec, '<');
    }
    return pad(format_int(v.as_int(), spec), spec, '>');
}

}  // namespace

std::string py_str_format(Evaluator& ev, const std::string& fmt, const Args& args) {
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if (c == '}') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '}') {
                out.push_back('}');
                ++i;
                continue;
            }
            format_error("Single '}' encountered in format string");
        }
        if (c != '{') {
            out.push_back(c);
            continue;
        }
        if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
            out.push_back('{');
            ++i;
            continue;
        }
        const size_t close = fmt.find('}', i);
        if (close == std::string::npos) format_error("Single '{' encountered in format string");
        std::string field = fmt.substr(i + 1, close - i - 1);
        i = close;
        std::string spec;
        char conversion = 0;
        if (const size_t colon = field.find(':'); colon != std::string::npos) {
            spec = field.substr(colon + 1);
            field.resize(colon);
        }
        if (const size_t bang = field.find('!'); bang != std::string::npos) {
            if (bang + 2 != field.size()) format_error("expected ':' after conversion specifier");
            conversion = field[bang + 1];
            field.resize(bang);
        }
        // The first part names the argument; .attr and [key] parts follow.
        size_t end = field.find_first_of(".[");
        const std::string head = field.substr(0, end);
        Value v;
        if (head.empty() || (head.find_first_not_of("0123456789") == std::string::npos)) {
            const size_t index = head.empty() ? auto_index++ : std::stoul(head);
            if (index >= args.positional.size())
                format_error("Replacement index " + std::to_string(index) + " out of range for positional args tuple");
            v = args.positional[index];
        } else {
            bool found = false;
            for (const auto& [k, val] : args.keyword)
                if (k == head) v = val, found = true;
            if (!found) format_error("KeyError: '" + head + "'");
        }
        while (end != std::string::npos && end < field.size()) {
            if (field[end] == '.') {
                const size_t next = field.find_first_of(".[", end + 1);
                v = get_attribute(v, field.substr(end + 1, next == std::string::npos ? std::string::npos : next - end - 1));
                end = next;
            } else {
                const size_t rb = field.find(']', end);
                if (rb == std::string::npos) format_error("Missing ']' in format string");
                const std::string key = field.substr(end + 1, rb - end - 1);
                const bool numeric = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
                v = get_item(v, numeric ? Value(static_cast<int64_t>(std::stoll(key))) : Value(key));
                end = rb + 1 < field.size() ? rb + 1 : std::string::npos;
            }
        }
        if (conversion == 'r' || conversion == 'a')
            v = Value(to_repr(v));
        else if (conversion == 's')
            v = Value(to_str(v));
        else if (conversion)
            format_error(std::string("Unknown conversion specifier ") + conversion);
        out += format_value(v, spec);
        ev.check_string_size(out.size());
    }
    return out;
}

}  // namespace radiance::jinja::detail
