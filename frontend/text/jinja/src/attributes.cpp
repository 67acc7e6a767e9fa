#include "attributes.h"

#include <algorithm>

#include "radiance/jinja/error.h"
#include "runtime_objects.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja::detail {

namespace {
Value no_attribute(const Value& obj, const std::string& name) {
    return Value::undefined("'" + type_name(obj) + " object' has no attribute '" + name + "'");
}

Value no_element(const Value& obj, const Value& key) {
    if (key.is_string()) return no_attribute(obj, key.as_string());
    return Value::undefined("'" + type_name(obj) + " object' has no element " + to_repr(key));
}

// Python's slice.indices(): clamps start/stop for a sequence of length `len`.
std::vector<size_t> slice_positions(int64_t len, const Value& start_v, const Value& stop_v, const Value& step_v) {
    const int64_t step = step_v.is_none() ? 1 : step_v.as_int();
    if (step == 0) throw Error(Error::Kind::Runtime, "slice step cannot be zero");
    auto adjust = [&](const Value& v, int64_t none_value) -> int64_t {
        if (v.is_none()) return none_value;
        int64_t i = v.as_int();
        if (i < 0) {
            i = i < -len ? -1 : i + len;
            if (i < 0) return step < 0 ? -1 : 0;
        } else if (i >= len) {
            return step < 0 ? len - 1 : len;
        }
        return i;
    };
    const int64_t start = adjust(start_v, step < 0 ? len - 1 : 0);
    const int64_t stop = adjust(stop_v, step < 0 ? -1 : len);
    std::vector<size_t> out;
    if (step > 0) {
        for (int64_t i = start; i < stop; i += step) out.push_back(static_cast<size_t>(i));
    } else {
        for (int64_t i = start; i > stop; i += step) out.push_back(static_cast<size_t>(i));
    }
    return out;
}

bool is_slice_index(const Value& v) { return v.is_none() || v.is_int() || v.is_bool(); }
}  // namespace

Value get_attribute_path(const Value& item, const Value& path) {
    if (path.is_none() || path.is_undefined()) return item;
    if (!path.is_string()) return get_item(item, path);
    Value v = item;
    const std::string& s = path.as_string();
    size_t start = 0;
    while (true) {
        const size_t dot = s.find('.', start);
        const std::string part = s.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        const bool digits = !part.empty() && part.find_first_not_of("0123456789") == std::string::npos;
        v = get_item(v, digits && part.size() < 19 ? Value(static_cast<int64_t>(std::stoll(part))) : Value(part));
        if (dot == std::string::npos) return v;
        start = dot + 1;
    }
}

Value unsafe_attribute(const Value& obj, const std::string& name) {
    return Value::undefined("access to attribute '" + name + "' of '" + type_name(obj) + "' object is unsafe.");
}

Value get_attribute(const Value& obj, const std::string& name) {
    switch (obj.kind()) {
    case Value::Kind::Undefined: fail_undefined(obj);
    case Value::Kind::Dict: {
        Value m = dict_method(obj, name);
        if (!m.is_undefined() || !m.undefined_hint().empty()) return m;
        if (const Value* v = obj.find(name)) return *v;
        return no_attribute(obj, name);
    }
    case Value::Kind::String: {
        Value m = string_method(obj, name);
        return m.is_undefined() && m.undefined_hint().empty() ? no_attribute(obj, name) : m;
    }
    case Value::Kind::List: {
        Value m = list_method(obj, name);
        return m.is_undefined() && m.undefined_hint().empty() ? no_attribute(obj, name) : m;
    }
    case Value::Kind::Object: return obj.as_object()->get_attr(name);
    default: return no_attribute(obj, name);
    }
}

Value get_item(const Value& obj, const Value& key) {
    switch (obj.kind()) {
    case Value::Kind::Undefined: fail_undefined(obj);
    case Value::Kind::Dict:
        if (const Value* v = obj.find(key)) return *v;
        break;
    case Value::Kind::List:
    case Value::Kind::String:
        if ((key.is_int() || key.is_bool()) && (obj.is_string() || obj.is_list_or_tuple() || obj.seq_kind() == Value::SeqKind::Range)) {
            if (obj.is_list()) {
                const auto len = static_cast<int64_t>(obj.as_list().size());
                int64_t i = key.as_int();
                if (i < 0) i += len;
                if (i >= 0 && i < len) return obj.as_list()[static_cast<size_t>(i)];
                return no_element(obj, key);
            }
            const std::u32string cps = to_u32(obj.as_string());
            int64_t i = key.as_int();
            const auto n = static_cast<int64_t>(cps.size());
            if (i < 0) i += n;
            if (i >= 0 && i < n) return Value(to_utf8(std::u32string(1, cps[static_cast<size_t>(i)])));
            return no_element(obj, key);
        }
        break;
    default: break;
    }
    // The sandbox falls back to the attribute of that name.
    if (key.is_string()) return get_attribute(obj, key.as_string());
    return no_element(obj, key);
}

Value get_slice(const Value& obj, const Value& start, const Value& stop, const Value& step) {
    // Jinja compiles slices to plain Python subscripts (not the sandbox's getitem), so
    // bad operands raise instead of giving undefined.
    if (obj.is_undefined()) fail_undefined(obj);
    if (!is_slice_index(start) || !is_slice_index(stop) || !is_slice_index(step))
        throw Error(Error::Kind::Runtime, "slice indices must be integers or None or have an __index__ method");
    if (obj.is_list_or_tuple() || (obj.is_list() && obj.seq_kind() == Value::SeqKind::Range)) {
        const ValueList& items = obj.as_list();
        ValueList out;
        for (size_t i : slice_positions(static_cast<int64_t>(items.size()), start, stop, step)) out.push_back(items[i]);
        return obj.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
    }
    if (obj.is_string()) {
        const std::u32string cps = to_u32(obj.as_string());
        std::u32string out;
        for (size_t i : slice_positions(static_cast<int64_t>(cps.size()), start, stop, step)) out.push_back(cps[i]);
        return Value(to_utf8(out));
    }
    if (obj.is_dict()) throw Error(Error::Kind::Runtime, "unhashable type: 'slice'");
    throw Error(Error::Kind::Runtime, "'" + type_name(obj) + "' object is not subscriptable");
}

ValueList iterate(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return v.as_list();
    case Value::Kind::Dict: {
        ValueList keys;
        keys.reserve(v.as_dict().size());
        for (const auto& kv : v.as_dict()) keys.push_back(kv.first);
        return keys;
    }
    case Value::Kind::String: {
        ValueList chars;
        const std::string& s = v.as_string();
        for (size_t pos = 0; pos < s.size();) {
            const size_t start = pos;
            next_code_point(s, pos);
            chars.emplace_back(s.substr(start, pos - start));
        }
        return chars;
    }
    case Value::Kind::Object:
        if (auto* it = dynamic_cast<Iterator*>(v.as_object())) return it->take_rest();
        [[fallthrough]];
    default: throw Error(Error::Kind::Runtime, "'" + type_name(v) + "' object is not iterable");
    }
}

bool contains(const Value& container, const Value& item) {
    switch (container.kind()) {
    case Value::Kind::String:
        if (!item.is_string()) throw Error(Error::Kind::Runtime, "'in <string>' requires string as left operand, not " + type_name(item));
        return container.as_string().find(item.as_string()) != std::string::npos;
    case Value::Kind::List:
        return std::any_of(container.as_list().begin(), container.as_list().end(), [&](const Value& x) { return py_equal(x, item); });
    case Value::Kind::Dict: require_hashable(item); return container.find(item) != nullptr;
    case Value::Kind::Undefined: return false;  // Undefined iterates as empty
    case Value::Kind::Object:
        if (auto* it = dynamic_cast<Iterator*>(container.as_object())) {
            for (Value x; it->next(x);)  // Python consumes the iterator up to the match
                if (py_equal(x, item)) return true;
            return false;
        }
        [[fallthrough]];
    default: throw Error(Error::Kind::Runtime, "argument of type '" + type_name(container) + "' is not iterable");
    }
}

size_t py_len(const Value& v) {
    switch (v.kind()) {
    case Value::Kind::Undefined: return 0;
    case Value::Kind::String: return code_point_count(v.as_string());
    case Value::Kind::List: return v.as_list().size();
    case Value::Kind::Dict: return v.as_dict().size();
    default: throw Error(Error::Kind::Runtime, "object of type '" + type_name(v) + "' has no len()");
    }
}

}  // namespace radiance::jinja::detail
