#include "radiance/jinja/json_convert.h"

#include <limits>

#include "radiance/jinja/error.h"

namespace radiance::jinja {

namespace {
template <class Json>
Value convert(const Json& j, int depth) {
    if (depth > kMaxValueDepth)
        throw Error(Error::Kind::Runtime, "JSON context nested more than " + std::to_string(kMaxValueDepth) + " levels deep");
    switch (j.type()) {
    case nlohmann::json::value_t::null: return Value::none();
    case nlohmann::json::value_t::boolean: return Value(j.template get<bool>());
    case nlohmann::json::value_t::number_integer: return Value(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: {
        const auto u = j.template get<uint64_t>();
        // Python ints are unbounded; past int64 we keep the magnitude as a float.
        if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return Value(static_cast<int64_t>(u));
        return Value(static_cast<double>(u));
    }
    case nlohmann::json::value_t::number_float: return Value(j.template get<double>());
    case nlohmann::json::value_t::string: return Value(j.template get<std::string>());
    case nlohmann::json::value_t::array: {
        ValueList items;
        items.reserve(j.size());
        for (const auto& item : j) items.push_back(convert(item, depth + 1));
        return Value::list(std::move(items));
    }
    case nlohmann::json::value_t::object: {
        DictItems items;
        items.reserve(j.size());
        for (auto it = j.begin(); it != j.end(); ++it) items.emplace_back(Value(it.key()), convert(it.value(), depth + 1));
        return Value::dict(std::move(items));
    }
    case nlohmann::json::value_t::binary: throw Error(Error::Kind::Runtime, "binary JSON values cannot be passed to a template");
    case nlohmann::json::value_t::discarded: return Value();
    }
    return Value();
}
}  // namespace

Value from_json(const nlohmann::json& j) { return convert(j, 0); }
Value from_json(const nlohmann::ordered_json& j) { return convert(j, 0); }

}  // namespace radiance::jinja
