// sampling_params.h: how a request's tokens are drawn, one type from the API fields to the
// sampler: the front end fills it from a request, the scheduler sends it with each row that
// samples (ipc::SampleSpec), the worker's sampler (radiance/sampling/sampler.h, which gives the
// exact semantics) applies it. And the (token, logprob) pair every layer reports alternatives as.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace radiance::step {

struct SamplingParams {
    float temperature = 1.0f;  // <= 0: greedy (argmax, ties to the lowest id)
    float top_p = 1.0f;        // >= 1: off
    int32_t top_k = 0;         // <= 0 or >= vocab: off
    float min_p = 0.0f;        // <= 0: off
    float presence_penalty = 0.0f;
    float frequency_penalty = 0.0f;
    float repetition_penalty = 1.0f;  // 1: off; HF style, over prompt and generated tokens
    // At most frontend::kMaxLogitBias entries; ids outside the vocabulary are refused by the
    // front end and ignored by the sampler.
    std::vector<std::pair<int32_t, float>> logit_bias;
    int32_t top_logprobs = -1;  // -1: no logprobs; 0: the chosen token's; k: and the k most likely
    // Same seed, same tokens, whatever else shares the step. None: the scheduler draws one, and
    // every row it sends carries it.
    std::optional<uint64_t> seed;
};

// Whether a row's token needs nothing but its logits and its draw: no penalties, no bias, no
// logprobs. Such a token may be picked where the logits are (on a card) and, picked alike on every
// rank, fed to the next step before the host has seen it (the overlapped scheduler).
inline bool needs_only_logits(const SamplingParams& s) {
    return s.top_logprobs < 0 && s.presence_penalty == 0.0f && s.frequency_penalty == 0.0f && s.repetition_penalty == 1.0f &&
           s.logit_bias.empty();
}

struct TokenLogprob {
    int32_t token = 0;
    float logprob = 0;
    friend bool operator==(const TokenLogprob&, const TokenLogprob&) = default;
};

}  // namespace radiance::step
