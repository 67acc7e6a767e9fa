// quant_test_util.h: drives a quantiser the way rad-convert does (encoding, then row blocks of
// the weight into whole planes) and decodes the result with the core's decoder.
#pragma once
#include <radiance/rad_decode.h>
#include <radiance/rad_quant.h>

#include <map>
#include <string>
#include <vector>

namespace qtest {

// libquant's quantiser `name`, loaded from the build's home (the registry stays loaded).
const RadQuantizerInfo& quantizer(const std::string& name);

struct Quantized {
    int rc = RAD_OK;  // the first non-OK status of encoding or quantize
    RadEncoding enc{};
    std::vector<std::vector<uint8_t>> planes;
};

// Quantises a [rows x cols] weight with `opts`, in the quantiser's row blocks, or in blocks of
// `block_rows` when nonzero (a multiple of what the encoding needs).
Quantized run(const RadQuantizerInfo& q, const std::vector<float>& w, int64_t rows, int64_t cols,
              const std::map<std::string, std::string>& opts, int64_t block_rows = 0);

// The core decoder over every row.
std::vector<float> decode(const Quantized& qz, int64_t rows, int64_t cols);

// ||a - b||_F / ||b||_F in double.
double rel_frobenius(const std::vector<float>& a, const std::vector<float>& b);

// Gaussian values (mean 0, standard deviation sd) from a fixed seed.
std::vector<float> gaussian(size_t n, float sd, uint32_t seed);

}  // namespace qtest
