// gram_file.h: libquant's reader of the calibration tap's folder (the format is the engine's
// radiance/engine/gram_files.h; a plugin links nothing of the engine, so it reads it itself).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace quant {

struct Gram {
    int64_t K = 0, tokens = 0;
    std::vector<double> g;  // K * K, row-major: the sum over the input rows x of x^T x
};

// The file DIR/index.txt names for weight `name` (weights that read the same input, as a layer's
// q, k and v projections, share one); "" where the index or the entry is missing.
std::string gram_file_of(const std::string& dir, const std::string& name);

// The Gram matrix of weight `name` from folder `dir`; false with `why` naming the folder, the
// weight or the file (no index, no entry for the weight, a short or malformed file).
bool read_gram(const std::string& dir, const std::string& name, Gram* out, std::string* why);

}  // namespace quant
