// counter_rng.h: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC 2011), a counter-based generator: the numbers are a pure function of (key, counter), so a
// request draws the same numbers at the same position whatever else is batched with it, and a
// request recomputed after a worker restart draws them again.
#pragma once
#include <array>
#include <cstdint>

namespace radiance::sampling {

using PhiloxCounter = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

// The raw block function: ten rounds of Philox4x32.
PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key);

// A uniform double in [0, 1) with 53 random bits, keyed by the request's seed and the position
// of the token being sampled. `stream` separates independent draws at one position.
double uniform_at(uint64_t seed, uint64_t position, uint32_t stream = 0);

}  // namespace radiance::sampling
