// logprobs.h: log-softmax pieces, computed without materialising the whole normalised row.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "radiance/sampling/sampler.h"

namespace radiance::sampling::detail {

// The largest value and log(sum(exp(x))) of a row, in double. Both -inf when every entry is.
struct Normalizer {
    float max = 0;
    double log_sum = 0;
};
Normalizer normalizer(std::span<const float> x);

// The n largest entries (ties: lower id) as (id, x[id] - log_sum), most likely first.
// `scratch` is reused between calls.
std::vector<TokenLogprob> top_logprobs(std::span<const float> x, int32_t n, double log_sum, std::vector<int32_t>& scratch);

}  // namespace radiance::sampling::detail
