// hf_checkpoint.h: a Hugging Face model folder as the import quantiser reads it: its weight
// files' tensors by name (the converter's choice of files) (mapped read-only, the bytes as stored) and config.json's
// quantization_config. Written from the safetensors layout (a u64 header size, a JSON header of
// {name: {dtype, shape, data_offsets}}, then the data).
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace quant {

struct HfTensor {
    std::string name, file;
    std::string dtype;  // as the header spells it: "I32", "F16", "BF16", "F32", "F8_E4M3", "I8", ...
    std::vector<int64_t> shape;
    const uint8_t* data = nullptr;
    uint64_t bytes = 0;
};

class HfCheckpoint {
public:
    // The folder at `dir`, opened once a process and kept mapped (a converter's lifetime); null with
    // `err` set when a file cannot be read or is not safetensors.
    static const HfCheckpoint* open(const std::string& dir, std::string* err);

    const HfTensor* find(const std::string& name) const;
    // config.json's quantization_config; an empty object when it has none.
    const nlohmann::json& quant_config() const { return qc_; }
    const std::string& dir() const { return dir_; }

private:
    std::string dir_;
    nlohmann::json qc_ = nlohmann::json::object();
    std::map<std::string, HfTensor> tensors_;
    friend struct HfLoader;
};

// The bytes one element of a safetensors dtype takes (0 for one this file does not know).
int st_dtype_bytes(const std::string& dtype);

}  // namespace quant
