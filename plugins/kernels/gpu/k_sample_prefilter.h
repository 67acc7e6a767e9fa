// k_sample_prefilter.h: the pre-filter's launch, for k_sample.cu's `sample`.
#pragma once
#include "k_common.h"

namespace gpu {

// The candidates, maxima and counts of n rows (the engine's one scratch area is sized for the
// largest hook).
uint64_t sample_prefilter_scratch(int64_t n);

// The pre-filter's launches for `sample`'s operands (checked by the caller), where the vocabulary
// fits its parts and the scratch holds n rows; false: nothing launched, the one-block sampler
// serves every row.
bool launch_sample_prefilter(const RadArgs* a, int64_t n, int64_t vocab);

}  // namespace gpu
