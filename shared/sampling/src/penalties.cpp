#include "penalties.h"

namespace radiance::sampling::detail {

namespace {
bool in_row(int32_t id, size_t n) { return id >= 0 && static_cast<size_t>(id) < n; }
}  // namespace

void apply_logit_bias(std::span<float> logits, std::span<const std::pair<int32_t, float>> bias) {
    for (const auto& [id, b] : bias)
        if (in_row(id, logits.size())) logits[static_cast<size_t>(id)] += b;
}

void count_tokens(std::span<const int32_t> tokens, std::vector<uint32_t>& counts, std::vector<int32_t>& touched) {
    for (int32_t id : tokens) {
        if (!in_row(id, counts.size())) continue;
        if (counts[static_cast<size_t>(id)]++ == 0) touched.push_back(id);
    }
}

void reset_counts(std::vector<uint32_t>& counts, std::vector<int32_t>& touched) {
    for (int32_t id : touched) counts[static_cast<size_t>(id)] = 0;
    touched.clear();
}

void apply_repetition_penalty(std::span<float> logits, std::span<const int32_t> seen, float penalty) {
    for (int32_t id : seen) {
        float& x = logits[static_cast<size_t>(id)];
        x = x > 0 ? x / penalty : x * penalty;
    }
}

void apply_presence_frequency(std::span<float> logits, std::span<const int32_t> seen, const std::vector<uint32_t>& counts, float presence,
                              float frequency) {
    for (int32_t id : seen) {
        const auto n = static_cast<float>(counts[static_cast<size_t>(id)]);
        logits[static_cast<size_t>(id)] -= presence + frequency * n;
    }
}

}  // namespace radiance::sampling::detail
