// gram_files.h: the calibration tap's folder, what `gptq calib=DIR` reads. Written whole or not at
// all: each file goes to NAME.partial and is renamed into place, the index last, so a reader that
// finds the index finds every file it names.
//   DIR/index.txt      one line a weight: "NAME FILE" (NAME as the container stores the weight;
//                      several weights may name one FILE: they read the same input rows)
//   DIR/gram_N.bin     "RADGRAM1", u64 K, u64 tokens (the rows summed), then K * K f64 row-major
//                      (symmetric): the sum over input rows x of x^T x. Little-endian (the host's).
// libquant's gptq.cpp reads it with its own reader (a plugin links nothing of the engine).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace radiance::engine {

inline constexpr char kGramMagic[8] = {'R', 'A', 'D', 'G', 'R', 'A', 'M', '1'};

// Writes one Gram matrix file atomically; throws radiance::Error naming it.
void write_gram_file(const std::string& path, int64_t K, int64_t tokens, const std::vector<double>& gram);
// Writes DIR/index.txt atomically from (weight name, file name) pairs; throws naming it.
void write_gram_index(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& entries);

}  // namespace radiance::engine
