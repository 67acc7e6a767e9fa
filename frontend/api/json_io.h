// json_io.h: reading request bodies and fields with errors that name the field, and writing
// JSON that cannot throw on odd text.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace radiance::frontend {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// Invalid UTF-8 (a token cut mid-character, echoed bytes) becomes U+FFFD instead of an exception.
std::string dump_json(const json& j);
std::string dump_json(const ordered_json& j);

// Caps on a request body's objects, checked in one linear pass before parsing (json_io.cpp says
// why): keys in any one object (as many as logit_bias may hold: kMaxLogitBias) and in all.
inline constexpr uint32_t kMaxObjectKeys = 1024;
inline constexpr uint64_t kMaxBodyKeys = 65536;

// The body as a JSON object: 400 for invalid JSON, nesting deeper than max_depth or more keys
// than the caps above (both checked before parsing, so no recursive walk ever meets a hostile
// depth and no object costs quadratic time), or anything but an object.
ordered_json parse_body(const std::string& body, int max_depth = 64);

// Field readers: absent or null gives nullopt; a wrong type or a value out of [lo, hi] throws
// ApiError 400 with param = name.
std::optional<double> get_number(const ordered_json& obj, const std::string& name, double lo, double hi);
std::optional<int64_t> get_int(const ordered_json& obj, const std::string& name, int64_t lo, int64_t hi);
std::optional<bool> get_bool(const ordered_json& obj, const std::string& name);
std::optional<std::string> get_string(const ordered_json& obj, const std::string& name);
// Any JSON integer (negative ones wrap): seeds are 64-bit patterns.
std::optional<uint64_t> get_seed(const ordered_json& obj, const std::string& name);
// A string, or an array of at most max_items strings; empty strings are dropped.
std::vector<std::string> get_string_list(const ordered_json& obj, const std::string& name, int max_items);

// A short name of the JSON type, for messages ("expected an integer, got string").
std::string json_type_name(const ordered_json& v);

}  // namespace radiance::frontend
