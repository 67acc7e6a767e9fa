// openai_shapes.h: JSON pieces both OpenAI endpoints answer with.
#pragma once
#include "api_error.h"
#include "json_io.h"

namespace radiance::frontend {

inline ordered_json openai_usage(int prompt_tokens, int completion_tokens) {
    return {
        {"prompt_tokens", prompt_tokens}, {"completion_tokens", completion_tokens}, {"total_tokens", prompt_tokens + completion_tokens}};
}

// stream_options.include_usage.
inline bool openai_include_usage(const ordered_json& body) {
    auto so = body.find("stream_options");
    if (so == body.end() || so->is_null()) return false;
    if (!so->is_object()) throw bad_request("'stream_options' must be an object", "stream_options");
    return get_bool(*so, "include_usage").value_or(false);
}

// vLLM's cache_salt: a request shares cached KV blocks only with requests of the same salt. A
// non-empty string (vLLM's rule) of at most 1,024 bytes (it is kept with every cached first block).
inline std::string openai_cache_salt(const ordered_json& body) {
    const std::optional<std::string> salt = get_string(body, "cache_salt");
    if (!salt) return "";
    if (salt->empty()) throw bad_request("'cache_salt' must be a non-empty string", "cache_salt");
    if (salt->size() > 1024) throw bad_request("'cache_salt' is over 1024 bytes", "cache_salt");
    return *salt;
}

// The event a stream carries when a generation fails after the 200 went out (the SDKs raise it).
inline ordered_json openai_stream_error(const ApiError& e) {
    return {{"error",
             {{"message", e.what()}, {"type", openai_error_type(e.status)}, {"param", nullptr}, {"code", static_cast<int>(e.status)}}}};
}

}  // namespace radiance::frontend
