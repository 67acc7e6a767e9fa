#include "json_io.h"

#include <cmath>
#include <vector>

#include "api_error.h"

namespace radiance::frontend {

std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }
std::string dump_json(const ordered_json& j) { return j.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

namespace {

// One pass over the bytes, before any parse: nesting depth, keys in one object and keys in all.
// nlohmann's ordered_json (which keeps the keys' order: tool schemas and chat templates need it)
// finds a key by a linear search, so an object of n keys costs n^2 / 2 comparisons to build and
// a 100k-key body took 12 s of an io thread; within these caps the costliest body parses in
// ~0.1 s. Keys are counted as the ':' that end them (outside strings) at an object's own level;
// the error names the top-level field the object sits under (param), which is what a client set.
struct ShapeError {
    std::string message, param;
};

std::optional<ShapeError> shape_error(const std::string& text, int max_depth) {
    std::vector<uint32_t> keys;  // per open container: keys so far, or UINT32_MAX for an array
    keys.reserve(16);
    uint64_t total = 0;
    bool in_string = false, escaped = false;
    size_t string_start = 0, last_string_start = 0, last_string_end = 0;
    std::string field;  // the top-level key whose value is being scanned
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false, last_string_start = string_start, last_string_end = i;
        } else if (c == '"') {
            in_string = true;
            string_start = i + 1;
        } else if (c == '[' || c == '{') {
            if (static_cast<int>(keys.size()) >= max_depth)
                return ShapeError{"the request body nests JSON deeper than " + std::to_string(max_depth) + " levels", field};
            keys.push_back(c == '{' ? 0 : UINT32_MAX);
        } else if (c == ']' || c == '}') {
            if (!keys.empty()) keys.pop_back();
        } else if (c == ':' && !keys.empty() && keys.back() != UINT32_MAX) {
            if (keys.size() == 1) field.assign(text, last_string_start, last_string_end - last_string_start);
            if (++keys.back() > kMaxObjectKeys)
                return keys.size() == 1
                           ? ShapeError{"the request body has more than " + std::to_string(kMaxObjectKeys) + " keys", ""}
                           : ShapeError{"'" + field + "' holds a JSON object of more than " + std::to_string(kMaxObjectKeys) + " keys",
                                        field};
            if (++total > kMaxBodyKeys)
                return ShapeError{"the request body has more than " + std::to_string(kMaxBodyKeys) + " JSON object keys", ""};
        }
    }
    return std::nullopt;
}

[[noreturn]] void wrong_type(const std::string& name, const char* expected, const ordered_json& v) {
    throw bad_request("'" + name + "' must be " + expected + ", not " + json_type_name(v), name);
}

std::string show(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
}

}  // namespace

std::string json_type_name(const ordered_json& v) {
    switch (v.type()) {
    case ordered_json::value_t::null: return "null";
    case ordered_json::value_t::boolean: return "a boolean";
    case ordered_json::value_t::number_integer:
    case ordered_json::value_t::number_unsigned: return "an integer";
    case ordered_json::value_t::number_float: return "a number";
    case ordered_json::value_t::string: return "a string";
    case ordered_json::value_t::array: return "an array";
    case ordered_json::value_t::object: return "an object";
    default: return "an unsupported value";
    }
}

ordered_json parse_body(const std::string& body, int max_depth) {
    if (auto e = shape_error(body, max_depth)) throw bad_request(e->message, e->param);
    ordered_json j;
    try {
        j = ordered_json::parse(body);
    } catch (const ordered_json::parse_error& e) {
        throw bad_request(std::string("the request body is not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw bad_request("the request body must be a JSON object, not " + json_type_name(j));
    return j;
}

std::optional<double> get_number(const ordered_json& obj, const std::string& name, double lo, double hi) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) wrong_type(name, "a number", *it);
    const double v = it->get<double>();
    if (!(v >= lo && v <= hi))
        throw bad_request("'" + name + "' must be between " + show(lo) + " and " + show(hi) + ", not " + it->dump(), name);
    return v;
}

std::optional<int64_t> get_int(const ordered_json& obj, const std::string& name, int64_t lo, int64_t hi) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_number()) wrong_type(name, "an integer", *it);
    const double d = it->get<double>();
    if (it->is_number_float() && d != std::floor(d)) wrong_type(name, "an integer", *it);
    if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)))
        throw bad_request("'" + name + "' must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", not " + it->dump(),
                          name);
    if (it->is_number_float()) return static_cast<int64_t>(d);
    if (it->is_number_unsigned()) return static_cast<int64_t>(it->get<uint64_t>());
    return it->get<int64_t>();
}

std::optional<bool> get_bool(const ordered_json& obj, const std::string& name) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_boolean()) wrong_type(name, "a boolean", *it);
    return it->get<bool>();
}

std::optional<std::string> get_string(const ordered_json& obj, const std::string& name) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) wrong_type(name, "a string", *it);
    return it->get<std::string>();
}

std::optional<uint64_t> get_seed(const ordered_json& obj, const std::string& name) {
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return std::nullopt;
    if (it->is_number_unsigned()) return it->get<uint64_t>();
    if (it->is_number_integer()) return static_cast<uint64_t>(it->get<int64_t>());
    wrong_type(name, "an integer", *it);
}

std::vector<std::string> get_string_list(const ordered_json& obj, const std::string& name, int max_items) {
    std::vector<std::string> out;
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null()) return out;
    if (it->is_string()) {
        if (!it->get_ref<const std::string&>().empty()) out.push_back(it->get<std::string>());
        return out;
    }
    if (!it->is_array()) wrong_type(name, "a string or an array of strings", *it);
    if (it->size() > static_cast<size_t>(max_items))
        throw bad_request(
            "'" + name + "' has " + std::to_string(it->size()) + " entries; at most " + std::to_string(max_items) + " are allowed", name);
    for (const auto& v : *it) {
        if (!v.is_string()) wrong_type(name, "a string or an array of strings", *it);
        if (!v.get_ref<const std::string&>().empty()) out.push_back(v.get<std::string>());
    }
    return out;
}

}  // namespace radiance::frontend
