// sampling_fields.h: the sampling knobs of each wire format, read and range-checked into the
// scheduler's SamplingParams. Errors name the field (param) as the request spelled it.
#pragma once
#include <cstdint>

#include "api_state.h"
#include "generation.h"

namespace radiance::frontend {

// OpenAI chat and completions: temperature, top_p, top_k, min_p, seed, presence_penalty,
// frequency_penalty, repetition_penalty, logit_bias ({"id": bias}).
SamplingParams read_openai_sampling(const ordered_json& body, const ApiState& api);
// Anthropic messages: temperature (0..1), top_p, top_k.
SamplingParams read_anthropic_sampling(const ordered_json& body);
// llama-server /completion: temperature, top_k, top_p, min_p, seed (-1: random), repeat_penalty,
// presence_penalty, frequency_penalty, logit_bias ([[id, bias], ...] or {"id": bias}), n_probs.
SamplingParams read_llama_sampling(const ordered_json& body, const ApiState& api);

// Choice i of a request with n > 1 gets its own stream of randomness; choice 0 keeps the seed, so
// n = 1 and the first of n agree.
std::optional<uint64_t> seed_for_choice(std::optional<uint64_t> seed, size_t choice);

}  // namespace radiance::frontend
