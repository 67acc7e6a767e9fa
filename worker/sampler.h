// sampler.h: rank 0 turns one row of logits into a token (and logprobs) per the step's SampleSpec.
#pragma once
#include <cstdint>

#include "radiance/engine/engine.h"
#include "radiance/ipc/step_codec.h"

namespace radiance::worker {

ipc::Sampled sample_row(const float* logits, int64_t vocab, const ipc::SampleSpec& spec);

// How the engine may pick the spec's token where the logits are: greedy or sampled with
// temperature / top_k / top_p / min_p and the host's draw for (seed, draw), when nothing else is
// asked (no penalties, bias or logprobs) and, for a sampled row, the card can sample
// (`sample_on_card`), and a structured-output mask only where the card's pick ops take one
// (`mask_on_card`). Otherwise on_card is false and the host samples from the row's logits.
engine::CardDraw card_draw(const ipc::SampleSpec& spec, bool sample_on_card, bool mask_on_card);

// Whether this rank's engine draws sampled rows on the card: its plan has the `sample` op and
// RADIANCE_SAMPLE_ON_HOST=1 (an A/B switch: the same logits drawn both ways must give the same
// tokens) is not set.
bool samples_on_card(const engine::Engine& eng);

}  // namespace radiance::worker
