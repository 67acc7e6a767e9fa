// json_util.h: small helpers for reading tokenizer.json objects with clear errors.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "radiance/text/tokenizer.h"
#include "regex.h"
#include "unicode.h"

namespace radiance::text::json_util {

using nlohmann::json;

inline std::string type_of(const json& j, const char* what) {
    if (!j.is_object() || !j.contains("type") || !j["type"].is_string())
        throw TokenizerError(std::string(what) + " without a \"type\": " + j.dump().substr(0, 200));
    return j["type"].get<std::string>();
}

// A value as the error message quotes it (at most 200 characters; bytes that are not UTF-8
// replaced, so quoting never throws).
inline std::string quote(const json& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace).substr(0, 200); }

inline bool get_bool(const json& j, const char* key, bool fallback) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_boolean()) throw TokenizerError(std::string("\"") + key + "\" is " + quote(*it) + ", not true or false");
    return it->get<bool>();
}

inline std::string get_string(const json& j, const char* key, const std::string& fallback = {}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    if (!it->is_string()) throw TokenizerError(std::string("\"") + key + "\" is " + quote(*it) + ", not a string");
    return it->get<std::string>();
}

// An integer of the file in [lo, hi], else an error naming `what` and the value: a float (1e64),
// a string or an integer out of range is refused here, never converted (nlohmann's get<int> of an
// out-of-range float is undefined behaviour; of a wide integer, a silent wrap).
inline int64_t get_int(const json& v, const char* what, int64_t lo, int64_t hi) {
    bool ok = false;
    int64_t x = 0;
    if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        ok = u <= static_cast<uint64_t>(hi);
        x = ok ? static_cast<int64_t>(u) : 0;
    } else if (v.is_number_integer()) {
        x = v.get<int64_t>();
        ok = true;
    }
    if (!ok || x < lo || x > hi)
        throw TokenizerError(std::string(what) + " is " + quote(v) + ", not an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return x;
}

// A token id: an integer from 0 to 2^31 - 1.
inline int32_t get_id(const json& v, const char* what) { return static_cast<int32_t>(get_int(v, what, 0, INT32_MAX)); }

inline const json& require(const json& j, const char* key, const char* what) {
    auto it = j.find(key);
    if (it == j.end()) throw TokenizerError(std::string(what) + " lacks \"" + key + "\"");
    return *it;
}

// {"String": "..."} or {"Regex": "..."}.
struct Pattern {
    std::string text;
    bool literal = true;
};

inline Pattern get_pattern(const json& j, const char* what) {
    const json& p = require(j, "pattern", what);
    if (p.contains("String")) return {p["String"].get<std::string>(), true};
    if (p.contains("Regex")) return {p["Regex"].get<std::string>(), false};
    throw TokenizerError(std::string(what) + ": unknown pattern " + p.dump());
}

// A field holding exactly one character ("replacement" of Metaspace, "content" of Strip).
inline std::string get_char(const json& j, const char* key, const char* what) {
    std::string s = require(j, key, what).get<std::string>();
    size_t i = 0;
    if (!s.empty()) (void)unicode::next_code_point(s, i);
    if (s.empty() || i != s.size()) throw TokenizerError(std::string(what) + ": \"" + key + "\" must be one character");
    return s;
}

}  // namespace radiance::text::json_util
