#pragma once
// Numbers a checkpoint states (config.json's keys, GGUF metadata), checked for kind and range
// before use: a value of the wrong kind is never passed over for a default, and the error names
// the key (`what`) and shows the value as it was written.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace radiance::convert {

// A finite number (positive where `positive`), else Error("<what> is <value>, not a ... number").
double checked_real(const nlohmann::json& v, const std::string& what, bool positive);

// An integer from `lo` to 2^31 - 1, else Error("<what> is <value>, not an integer from lo to 2^31 - 1").
int64_t checked_count(const nlohmann::json& v, const std::string& what, int64_t lo);

}  // namespace radiance::convert
