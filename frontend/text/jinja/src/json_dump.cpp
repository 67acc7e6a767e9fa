#include "json_dump.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "radiance/jinja/error.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {
void append_hex4(std::string& out, unsigned v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "\\u%04x", v);
    out += buf;
}

void dump_string(std::string& out, const std::string& s, bool ensure_ascii) {
    out.push_back('"');
    for (size_t pos = 0; pos < s.size();) {
        const size_t start = pos;
        const char32_t c = next_code_point(s, pos);
        switch (c) {
        case '"': out += "\\\""; continue;
        case '\\': out += "\\\\"; continue;
        case '\n': out += "\\n"; continue;
        case '\r': out += "\\r"; continue;
        case '\t': out += "\\t"; continue;
        case '\b': out += "\\b"; continue;
        case '\f': out += "\\f"; continue;
        default: break;
        }
        if (c < 0x20) {
            append_hex4(out, c);
        } else if (c < 0x80 || !ensure_ascii) {
            out.append(s, start, pos - start);
        } else if (c < 0x10000) {
            append_hex4(out, c);
        } else {
            const char32_t v = c - 0x10000;
            append_hex4(out, 0xD800 + (v >> 10));
            append_hex4(out, 0xDC00 + (v & 0x3FF));
        }
    }
    out.push_back('"');
}

std::string dump_float(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
    return float_repr(d);
}

[[noreturn]] void not_serializable(const Value& v) {
    throw Error(Error::Kind::Runtime, "Object of type " + type_name(v) + " is not JSON serializable");
}

// Python converts dict keys to strings before writing them.
std::string key_string(const Value& k, bool ensure_ascii) {
    std::string key;
    switch (k.kind()) {
    case Value::Kind::String: key = k.as_string(); break;
    case Value::Kind::Int: key = std::to_string(k.as_int()); break;
    case Value::Kind::Float: key = dump_float(k.as_float()); break;
    case Value::Kind::Bool: key = k.as_bool() ? "true" : "false"; break;
    case Value::Kind::None: key = "null"; break;
    default: throw Error(Error::Kind::Runtime, "keys must be str, int, float, bool or None, not " + type_name(k));
    }
    std::string out;
    dump_string(out, key, ensure_ascii);
    return out;
}

class Dumper {
public:
    explicit Dumper(const JsonDumpOptions& opts) : opts_(opts) {}

    void dump(std::string& out, const Value& v, int level) {
        switch (v.kind()) {
        case Value::Kind::None: out += "null"; return;
        case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
        case Value::Kind::Int: out += std::to_string(v.as_int()); return;
        case Value::Kind::Float: out += dump_float(v.as_float()); return;
        case Value::Kind::String: dump_string(out, v.as_string(), opts_.ensure_ascii); return;
        case Value::Kind::List:
            if (!v.is_list_or_tuple()) not_serializable(v);  // ranges and dict views
            dump_list(out, v.as_list(), level);
            return;
        case Value::Kind::Dict: dump_dict(out, v.as_dict(), level); return;
        default: not_serializable(v);
        }
    }

private:
    void newline(std::string& out, int level) {
        out.push_back('\n');
        for (int i = 0; i < level; ++i) out += *opts_.indent;
    }

    void dump_list(std::string& out, const ValueList& items, int level) {
        if (items.empty()) {
            out += "[]";
            return;
        }
        out.push_back('[');
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out += opts_.item_separator;
            if (opts_.indent) newline(out, level + 1);
            dump(out, items[i], level + 1);
        }
        if (opts_.indent) newline(out, level);
        out.push_back(']');
    }

    void dump_dict(std::string& out, const DictItems& dict, int level) {
        if (dict.empty()) {
            out += "{}";
            return;
        }
        std::vector<const std::pair<Value, Value>*> items;
        for (const auto& item : dict) items.push_back(&item);
        if (opts_.sort_keys) std::stable_sort(items.begin(), items.end(), [](auto* a, auto* b) { return py_less(a->first, b->first); });
        out.push_back('{');
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out += opts_.item_separator;
            if (opts_.indent) newline(out, level + 1);
            out += key_string(items[i]->first, opts_.ensure_ascii);
            out += opts_.key_separator;
            dump(out, items[i]->second, level + 1);
        }
        if (opts_.indent) newline(out, level);
        out.push_back('}');
    }

    const JsonDumpOptions& opts_;
};
}  // namespace

std::string py_json_dumps(const Value& v, const JsonDumpOptions& opts) {
    std::string out;
    Dumper(opts).dump(out, v, 0);
    return out;
}

}  // namespace radiance::jinja::detail
