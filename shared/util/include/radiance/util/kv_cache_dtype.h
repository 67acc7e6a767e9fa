// kv_cache_dtype.h: the words `--kv-cache-dtype` takes (vLLM's spelling), shared by `radiance
// serve`, the worker and the tools so that each accepts the same words and refuses the rest alike.
// Header-only and free of the plugin ABI: the front end reads the flag without linking the engine
// (radiance::engine::kv_dtype_of maps the canonical name to a RadDType).
#pragma once
#include <string>

#include "radiance/util/error.h"

namespace radiance {

inline constexpr const char* kKvCacheDtypeWords = "auto, fp8, fp8_e4m3, bf16, f32";

// The cache dtype a word names, as rad_dtype_name spells it: "" for auto (f32 on the host, bf16 on
// a card), "fp8_e4m3" (OCP e4m3fn codes with a scale a token and kv head), "bf16", "f32". `flag`
// names the flag in the error.
inline std::string parse_kv_cache_dtype(const std::string& word, const std::string& flag = "--kv-cache-dtype") {
    if (word == "auto") return "";
    if (word == "fp8" || word == "fp8_e4m3") return "fp8_e4m3";
    if (word == "bf16" || word == "f32") return word;
    throw Error(flag + " '" + word + "' is not one of " + kKvCacheDtypeWords);
}

}  // namespace radiance
