// runs.h: how rad-golden steps a fixture's prompts through the engine, as a server would.
//
// Three ways of feeding the decode steps:
//   teacher  each step is fed the reference's next token (Prompt::fed), whatever the model picked,
//            and every step's logits come back: the decode path's logits can be compared with
//            transformers' at every position, without one early near-tie derailing the rest;
//   argmax   each step is fed the host's argmax of the logits that came back (no decode
//            references needed: the fixture's greedy tokens are the only check of decode);
//   picked   each step is fed the token picked where the logits are (on a card its argmax op, and
//            in-process on a card the steps are queued pipelined, fed on the card); no logits come
//            back: the free-running greedy a server does.
// Together: every prompt prefilled in one step, then lockstep decode rows. Mixed: the scheduler's
// continuous batching (arrivals a step apart, prompts prefilled in chunks beside decode rows).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "golden_file.h"
#include "radiance/engine/engine.h"

namespace radiance::golden {

struct Stepper {
    int64_t vocab = 0;
    int block = 0;
    // Every out row's logits.
    std::function<void(const engine::StepBatch&, std::vector<float>&)> logits;
    // Every out row's greedy token, picked where its logits are.
    std::function<void(const engine::StepBatch&, std::vector<int32_t>&)> greedy;
    // Non-null (an in-process plan on a card): picked decode steps are queued with enqueue/collect.
    engine::Engine* pipelined = nullptr;
};

enum class Feed { teacher, argmax, picked };

struct Run {
    std::vector<std::vector<float>> logits;         // per prompt: the prompt's logits [n, vocab] (not picked)
    std::vector<std::vector<float>> decode_logits;  // per prompt: one row a decode step (not picked)
    // per prompt: the token after the prompt and after each decode step: teacher, the argmax of each
    // row (fed.size() + 1 tokens); argmax and picked, the greedy sequence (greedy.size() tokens)
    std::vector<std::vector<int32_t>> tokens;
    bool was_pipelined = false;
};

Run run_together(const Stepper& st, const std::vector<const Prompt*>& ps, Feed feed);
Run run_mixed(const Stepper& st, const std::vector<const Prompt*>& ps, Feed feed, size_t chunk);

int argmax(const float* v, int64_t n);

}  // namespace radiance::golden
