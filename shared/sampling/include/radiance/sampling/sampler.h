// sampler.h: one row of logits -> one token, its logprob and the top alternatives.
//
// The pipeline (docs/SAMPLING.md has the exact semantics):
//   allowed tokens (structured output) -> logit_bias -> repetition penalty (prompt + generated) -> presence/frequency penalties
//   (generated) -> temperature (<= 0: greedy) -> top_k -> top_p -> min_p -> draw.
// Logprobs are the log-softmax of the logits after bias, penalties and temperature (before
// top_k/top_p/min_p), so they describe the model's adjusted distribution, not the truncation.
//
// Randomness comes from counter_rng.h keyed by (seed, position): same seed and position, same
// token, whatever else shares the batch.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "radiance/step/sampling_params.h"

namespace radiance::sampling {

// The step contract's types (radiance/step/sampling_params.h); a seed left unset draws as 0.
using step::SamplingParams;
using step::TokenLogprob;

struct SampleResult {
    int32_t token = 0;
    float logprob = 0;              // 0 unless top_logprobs >= 0
    std::vector<TokenLogprob> top;  // top_logprobs entries, most likely first (ties: lower id)
};

// The request's tokens the penalties look at.
struct TokenHistory {
    std::span<const int32_t> prompt;     // repetition penalty only
    std::span<const int32_t> generated;  // repetition, presence and frequency penalties
};

// Holds scratch space sized to the vocabulary so sampling a row allocates (almost) nothing.
// One Sampler per thread; sample() is not reentrant.
class Sampler {
public:
    // `position`: the index of the token being sampled in its sequence (prompt length + tokens
    // generated before it); any number works as long as a recomputed request passes the same.
    // `allowed`: structured output's mask, bit t % 32 of word t / 32 for token t (empty: any
    // token); a token outside it counts as a logit of -inf from the start.
    SampleResult sample(std::span<const float> logits, const SamplingParams& params, const TokenHistory& history, uint64_t position,
                        std::span<const uint32_t> allowed = {});

private:
    int32_t draw_token(std::span<const float> x, int32_t top, const SamplingParams& params, uint64_t position);

    std::vector<float> work_;       // the adjusted logits
    std::vector<float> probs_;      // exp(work_ - max)
    std::vector<uint32_t> counts_;  // per-token counts, reset after each use
    std::vector<int32_t> touched_;  // which counts_ entries are non-zero
    std::vector<int32_t> order_;    // candidate ids
};

// Convenience for one-off calls (tests, tools): a fresh Sampler each time.
SampleResult sample(std::span<const float> logits, const SamplingParams& params, const TokenHistory& history, uint64_t position,
                    std::span<const uint32_t> allowed = {});

}  // namespace radiance::sampling
