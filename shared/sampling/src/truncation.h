// truncation.h: top_k, then top_p, then min_p over unnormalised probabilities.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "radiance/sampling/sampler.h"

namespace radiance::sampling::detail {

// True when top_k, top_p or min_p would remove anything from a row of `vocab` entries.
bool truncates(const SamplingParams& params, size_t vocab);

// `p` holds exp(x - max(x)) (so the most likely token has exactly 1). Fills `survivors` with
// the ids that pass top_k, top_p and min_p, in ascending id order (never empty when some p > 0).
void surviving_tokens(std::span<const float> p, const SamplingParams& params, std::vector<int32_t>& survivors);

}  // namespace radiance::sampling::detail
