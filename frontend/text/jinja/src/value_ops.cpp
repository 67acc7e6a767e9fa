#include "value_ops.h"

#include "radiance/jinja/error.h"

namespace radiance::jinja::detail {

bool truthy(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return false;
    case Value::Kind::Bool: return v.as_bool();
    case Value::Kind::Int: return v.as_int() != 0;
    case Value::Kind::Float: return v.as_float() != 0.0;
    case Value::Kind::String: return !v.as_string().empty();
    case Value::Kind::List: return !v.as_list().empty();
    case Value::Kind::Dict: return !v.as_dict().empty();
    case Value::Kind::Object: return true;
    }
    return false;
}

bool py_equal(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return a.as_float() == b.as_float();
        return a.as_int() == b.as_int();
    }
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.as_string() == b.as_string();
    case Value::Kind::List: {
        // Python never equates a list with a tuple, a range or a dict view.
        if (a.seq_kind() != b.seq_kind()) return false;
        const auto& x = a.as_list();
        const auto& y = b.as_list();
        if (x.size() != y.size()) return false;
        for (size_t i = 0; i < x.size(); ++i)
            if (!py_equal(x[i], y[i])) return false;
        return true;
    }
    case Value::Kind::Dict: {
        const auto& x = a.as_dict();
        if (x.size() != b.as_dict().size()) return false;
        for (const auto& [k, v] : x) {
            const Value* other = b.find(k);
            if (!other || !py_equal(v, *other)) return false;
        }
        return true;
    }
    case Value::Kind::Object: return a.as_object() == b.as_object();
    default: return false;
    }
}

bool py_less(const Value& a, const Value& b) {
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return a.as_float() < b.as_float();
        return a.as_int() < b.as_int();
    }
    if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 byte order = code point order
    if (a.is_list_or_tuple() && b.is_list_or_tuple() && a.is_tuple() == b.is_tuple()) {
        const auto& x = a.as_list();
        const auto& y = b.as_list();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (py_equal(x[i], y[i])) continue;
            return py_less(x[i], y[i]);
        }
        return x.size() < y.size();
    }
    if (a.is_undefined()) fail_undefined(a);
    if (b.is_undefined()) fail_undefined(b);
    throw Error(Error::Kind::Runtime, "'<' not supported between instances of '" + type_name(a) + "' and '" + type_name(b) + "'");
}

bool is_hashable(const Value& v) {
    if (v.is_dict()) return false;
    if (v.is_list()) {
        if (v.seq_kind() == Value::SeqKind::Range) return true;
        if (!v.is_tuple()) return false;
        for (const Value& x : v.as_list())
            if (!is_hashable(x)) return false;
    }
    return true;
}

void require_hashable(const Value& v) {
    if (!is_hashable(v)) throw Error(Error::Kind::Runtime, "unhashable type: '" + type_name(v) + "'");
}

std::string type_name(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::None: return "NoneType";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::String: return "str";
    case Value::Kind::List:
        switch (v.seq_kind()) {
        case Value::SeqKind::List: return "list";
        case Value::SeqKind::Tuple: return "tuple";
        case Value::SeqKind::Range: return "range";
        case Value::SeqKind::DictKeys: return "dict_keys";
        case Value::SeqKind::DictValues: return "dict_values";
        case Value::SeqKind::DictItems: return "dict_items";
        }
        return "list";
    case Value::Kind::Dict: return "dict";
    case Value::Kind::Object: return v.as_object()->type_name();
    }
    return "object";
}

std::string undefined_message(const Value& v) {
    const std::string& hint = v.undefined_hint();
    return hint.empty() ? "value is undefined" : hint;
}

void fail_undefined(const Value& v) { throw Error(Error::Kind::Runtime, undefined_message(v)); }

}  // namespace radiance::jinja::detail
