#include "radiance/sampling/sampler.h"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "logprobs.h"
#include "penalties.h"
#include "radiance/sampling/counter_rng.h"
#include "truncation.h"

namespace radiance::sampling {

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// NaN never wins and +inf would turn the softmax into NaN: map them to the ends of the finite
// range (NaN to -inf, +inf to the largest float) once, after every adjustment.
float sane(float v) {
    return std::isnan(v) ? kNegInf : v == std::numeric_limits<float>::infinity() ? std::numeric_limits<float>::max() : v;
}

// argmax of the row as sane() maps it (NaN as -inf, +inf as the largest float),
// without copying it: the largest value first (a plain max, which NaN never wins), then its first
// place.
int32_t argmax_sanitized(std::span<const float> x) {
    float top = kNegInf;
    for (float v : x) top = v > top ? v : top;
    if (top == kNegInf) return 0;  // only -inf and NaN: every entry ties at -inf
    const float floor = top == std::numeric_limits<float>::infinity() ? std::numeric_limits<float>::max() : top;
    for (size_t i = 0; i < x.size(); ++i)
        if (x[i] >= floor) return static_cast<int32_t>(i);
    return 0;
}

// Inverse CDF with one uniform draw over `ids` (ascending), or over every id when ids is null;
// `mass` is the sum of their p in that order.
int32_t draw(std::span<const float> p, const std::vector<int32_t>* ids, double mass, double u) {
    const size_t n = ids ? ids->size() : p.size();
    auto id_at = [&](size_t i) { return ids ? (*ids)[i] : static_cast<int32_t>(i); };
    const double target = u * mass;
    double cum = 0;
    for (size_t i = 0; i < n; ++i) {
        cum += p[static_cast<size_t>(id_at(i))];
        if (cum > target) return id_at(i);
    }
    return id_at(n - 1);  // rounding left the target at the very top
}

// Structured output: tokens outside the mask become -inf (ids past its words too).
void apply_allowed(std::span<float> x, std::span<const uint32_t> allowed) {
    for (size_t i = 0; i < x.size(); ++i)
        if ((i >> 5) >= allowed.size() || !((allowed[i >> 5] >> (i & 31)) & 1u)) x[i] = kNegInf;
}

}  // namespace

SampleResult Sampler::sample(std::span<const float> logits, const SamplingParams& s, const TokenHistory& history, uint64_t position,
                             std::span<const uint32_t> allowed) {
    if (logits.empty()) throw std::invalid_argument("sample: empty logits row");
    const size_t vocab = logits.size();
    const bool repetition = s.repetition_penalty != 1.0f && s.repetition_penalty > 0.0f;
    const bool presence_frequency = s.presence_penalty != 0.0f || s.frequency_penalty != 0.0f;
    const bool greedy = !(s.temperature > 0.0f);
    if (greedy && s.top_logprobs < 0 && s.logit_bias.empty() && !repetition && !presence_frequency && allowed.empty()) {
        SampleResult plain;  // nothing adjusts the row: no copy
        plain.token = argmax_sanitized(logits);
        return plain;
    }
    work_.assign(logits.begin(), logits.end());
    std::span<float> x(work_);

    if (!allowed.empty()) apply_allowed(x, allowed);
    detail::apply_logit_bias(x, s.logit_bias);
    if (repetition || presence_frequency) {
        counts_.resize(vocab, 0);
        if (repetition) {
            detail::count_tokens(history.prompt, counts_, touched_);
            detail::count_tokens(history.generated, counts_, touched_);
            detail::apply_repetition_penalty(x, touched_, s.repetition_penalty);
            detail::reset_counts(counts_, touched_);
        }
        if (presence_frequency) {
            detail::count_tokens(history.generated, counts_, touched_);
            detail::apply_presence_frequency(x, touched_, counts_, s.presence_penalty, s.frequency_penalty);
            detail::reset_counts(counts_, touched_);
        }
    }
    // Temperature and the NaN/inf mapping in one pass, finding the argmax (strict: ties keep the
    // lower id) on the way.
    const bool scale = !greedy && s.temperature != 1.0f;
    size_t top = 0;
    for (size_t i = 0; i < vocab; ++i) {
        x[i] = sane(scale ? x[i] / s.temperature : x[i]);
        if (x[i] > x[top]) top = i;
    }

    SampleResult out;
    detail::Normalizer norm;
    if (s.top_logprobs >= 0) {
        norm = detail::normalizer(x);
        out.top = detail::top_logprobs(x, s.top_logprobs, norm.log_sum, order_);
    }
    out.token = greedy ? static_cast<int32_t>(top) : draw_token(x, static_cast<int32_t>(top), s, position);
    if (s.top_logprobs >= 0) out.logprob = static_cast<float>(x[static_cast<size_t>(out.token)] - norm.log_sum);
    return out;
}

int32_t Sampler::draw_token(std::span<const float> x, int32_t top, const SamplingParams& s, uint64_t position) {
    const float mx = x[static_cast<size_t>(top)];
    if (mx == kNegInf) return top;  // nothing is possible: the greedy rule (token 0) decides
    // Unnormalised probabilities; the most likely token gets exactly 1 (min_p relies on it). Their
    // sum in id order comes with them, for a draw over every id.
    probs_.resize(x.size());
    const double u = uniform_at(s.seed.value_or(0), position);
    if (!detail::truncates(s, x.size())) {
        double all = 0;
        for (size_t i = 0; i < x.size(); ++i) all += probs_[i] = std::exp(x[i] - mx);
        return draw(probs_, nullptr, all, u);
    }
    for (size_t i = 0; i < x.size(); ++i) probs_[i] = std::exp(x[i] - mx);
    detail::surviving_tokens(probs_, s, order_);
    double mass = 0;
    for (int32_t id : order_) mass += probs_[static_cast<size_t>(id)];
    return draw(probs_, &order_, mass, u);
}

SampleResult sample(std::span<const float> logits, const SamplingParams& params, const TokenHistory& history, uint64_t position,
                    std::span<const uint32_t> allowed) {
    Sampler s;
    return s.sample(logits, params, history, position, allowed);
}

}  // namespace radiance::sampling
