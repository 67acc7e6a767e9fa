// sampler.cpp: the step's SampleSpec -> shared/sampling's sampler (its settings as they came) and history.
#include "sampler.h"

#include <cstdlib>

#include <radiance/sampling/counter_rng.h>
#include <radiance/sampling/sampler.h>

namespace radiance::worker {

ipc::Sampled sample_row(const float* logits, int64_t vocab, const ipc::SampleSpec& spec) {
    thread_local sampling::Sampler sampler;  // scratch sized to the vocabulary, reused
    // The front end sends the distinct tokens seen (repetition penalty) and the generated tokens'
    // counts (presence/frequency); the sampler takes them as token lists.
    std::vector<int32_t> generated;
    for (auto& [tok, count] : spec.gen_counts) generated.insert(generated.end(), static_cast<size_t>(count), tok);
    sampling::TokenHistory h{spec.seen_tokens, generated};
    sampling::SampleResult r = sampler.sample(std::span<const float>(logits, static_cast<size_t>(vocab)), spec.params, h,
                                              static_cast<uint64_t>(spec.draw), spec.allowed);
    return {r.token, r.logprob, std::move(r.top)};
}

bool samples_on_card(const engine::Engine& eng) {
    static const bool host_only = [] {
        const char* e = std::getenv("RADIANCE_SAMPLE_ON_HOST");
        return e && *e && *e != '0';
    }();
    return eng.sample_on_card() && !host_only;
}

engine::CardDraw card_draw(const ipc::SampleSpec& spec, bool sample_on_card, bool mask_on_card) {
    const step::SamplingParams& s = spec.params;
    engine::CardDraw d;
    const bool plain = s.top_logprobs < 0 && s.presence_penalty == 0.0f && s.frequency_penalty == 0.0f && s.repetition_penalty == 1.0f &&
                       s.logit_bias.empty();
    const bool greedy = !(s.temperature > 0.0f);
    d.on_card = plain && (greedy || sample_on_card) && (spec.allowed.empty() || mask_on_card);
    if (!d.on_card) return d;
    d.allowed = spec.allowed.empty() ? nullptr : spec.allowed.data();
    d.temperature = greedy ? 0.0f : s.temperature;
    d.top_p = s.top_p;
    d.min_p = s.min_p;
    d.top_k = s.top_k;
    d.u = greedy ? 0.0 : sampling::uniform_at(s.seed.value_or(0), static_cast<uint64_t>(spec.draw));
    return d;
}

}  // namespace radiance::worker
