// gguf_file.h: a GGUF file (v2 or v3) as the ggml quantiser reads it: the metadata it needs
// (strings and integers) and the tensor directory, over the file mapped read-only. Written from
// the format's published layout (llama.cpp's docs/gguf.md): header, key/value pairs, tensor
// infos (ne[0] the innermost, contiguous dimension), then the data at `general.alignment`.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace quant {

// The ggml tensor types the quantiser names (for messages) or reads.
enum GgmlType : uint32_t {
    kGgmlF32 = 0,
    kGgmlF16 = 1,
    kGgmlQ4_0 = 2,
    kGgmlQ4_1 = 3,
    kGgmlQ5_0 = 6,
    kGgmlQ5_1 = 7,
    kGgmlQ8_0 = 8,
    kGgmlQ4_K = 12,
    kGgmlQ5_K = 13,
    kGgmlQ6_K = 14,
    kGgmlBF16 = 30,
};

// "Q4_K" for 12, ...; "type N" for a number it does not know.
std::string ggml_type_name(uint32_t type);

struct GgufTensor {
    std::string name;
    uint32_t type = 0;
    int64_t rows = 1, cols = 0;  // ne[0] = cols; the outer dimensions' product = rows
    const uint8_t* data = nullptr;
    uint64_t row_bytes = 0;  // 0: a type the quantiser does not read (its size is unknown here)
};

class GgufFile {
public:
    // The file at `path`, opened once a process and kept mapped (a converter's lifetime); null with
    // `err` set when it cannot be read or is not GGUF.
    static const GgufFile* open(const std::string& path, std::string* err);
    // The `n` bytes at p (which must outlive it) read as a GGUF file named `path` in messages;
    // null with `err` set when they are not one (what open does with a mapped file, and
    // tests/fuzz/gguf_fuzz with its input).
    static std::unique_ptr<GgufFile> parse(const uint8_t* p, uint64_t n, const std::string& path, std::string* err);

    const GgufTensor* find(const std::string& name) const;
    const std::map<std::string, GgufTensor>& tensors() const { return tensors_; }
    // A string or integer key's value; `fallback` when absent or of another kind.
    std::string str(const std::string& key, const std::string& fallback = "") const;
    int64_t integer(const std::string& key, int64_t fallback) const;
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::map<std::string, std::string> strs_;
    std::map<std::string, int64_t> ints_;
    std::map<std::string, GgufTensor> tensors_;
    friend class GgufParser;
};

}  // namespace quant
