// penalties.h: the logit adjustments that come before temperature.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace radiance::sampling::detail {

// logits[id] += bias for each pair; ids outside the row are ignored.
void apply_logit_bias(std::span<float> logits, std::span<const std::pair<int32_t, float>> bias);

// Counts the tokens of `tokens` into counts (sized to the vocabulary, all zero on entry), noting
// each newly non-zero id in touched. Ids outside the vocabulary are skipped.
void count_tokens(std::span<const int32_t> tokens, std::vector<uint32_t>& counts, std::vector<int32_t>& touched);
// Zeroes the touched counts and clears touched.
void reset_counts(std::vector<uint32_t>& counts, std::vector<int32_t>& touched);

// HF RepetitionPenaltyLogitsProcessor: each seen token's logit is divided by the penalty when
// positive and multiplied by it otherwise. `seen` lists each token once.
void apply_repetition_penalty(std::span<float> logits, std::span<const int32_t> seen, float penalty);

// OpenAI: logit -= presence * [count > 0] + frequency * count, for the counted tokens.
void apply_presence_frequency(std::span<float> logits, std::span<const int32_t> seen, const std::vector<uint32_t>& counts, float presence,
                              float frequency);

}  // namespace radiance::sampling::detail
