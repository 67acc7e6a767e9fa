// random_weights.h: weights drawn as Hugging Face initialises a fresh model, for containers that
// only need a real geometry (benchmarks on the card, where writing a random checkpoint with
// transformers and converting it cost a minute of every device call).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace radiance::convert {

// The bytes of one weight of `shape` in `dtype` (f32, bf16 or f16): norm weights (a name with
// "norm" in it) are ones, other vectors (biases) zeros, matrices normal(0, std). The draw depends
// only on (seed, name, element index), never on the thread count.
std::vector<uint8_t> random_weight(const std::string& name, const std::vector<int64_t>& shape, int dtype, double std, uint64_t seed);

}  // namespace radiance::convert
