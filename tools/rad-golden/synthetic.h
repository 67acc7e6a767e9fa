// synthetic.h: prompts for `rad-golden --bitwise` on a checkpoint without golden.safetensors (the
// demo model). The probe compares the engine with itself, so it needs no transformers reference:
// any ids will do, fed by teacher forcing.
#pragma once
#include <cstdint>
#include <vector>

#include "golden_file.h"

namespace radiance::golden {

// Six prompts of 3, 7, 11, 17, 29 and 40 ids (shorter than a chunk of 5, ragged chunks, past the
// row walk's 24 rows; six decode rows, past the gemm decode kernel's unroll of 4) and 13 more to
// feed as `greedy` (bitwise.cpp feeds all but the last), from a fixed generator in [0, vocab).
std::vector<Prompt> synthetic_prompts(int64_t vocab);

}  // namespace radiance::golden
