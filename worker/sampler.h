// sampler.h: rank 0 turns one row of logits into a token (and logprobs) per the step's SampleSpec.
#pragma once
#include <cstdint>

#include "radiance/ipc/step_codec.h"

namespace radiance::worker {

ipc::Sampled sample_row(const float* logits, int64_t vocab, const ipc::SampleSpec& spec);

// True when the spec's token is the argmax of the raw logits and nothing else is asked (no
// temperature, penalties, bias or logprobs), so the engine may pick it where the logits are.
bool plain_greedy(const ipc::SampleSpec& spec);

}  // namespace radiance::worker
