// step_codec.h: step descriptors and results as bytes, the one encoding used in a shared-memory
// ring slot and in a gRPC StepPayload. Decoding checks every length against the buffer and names
// what is malformed; it never reads past the message.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "radiance/step/sampling_params.h"
#include "radiance/step/step_batch.h"

namespace radiance::ipc {

inline constexpr uint32_t kStepMagic = 0x50455453;    // "STEP"
inline constexpr uint32_t kResultMagic = 0x544c5352;  // "RSLT"

// How rank 0 picks the token of one out row: the request's settings (its seed always set) and
// what the penalties look at.
struct SampleSpec {
    step::SamplingParams params{.temperature = 0.0f};     // a default spec is greedy
    int64_t draw = 0;                                     // the RNG counter: which draw of this request this is
    std::vector<int32_t> seen_tokens;                     // prompt + generated, for the repetition penalty
    std::vector<std::pair<int32_t, int32_t>> gen_counts;  // generated token -> count, for presence/frequency
    // Structured output: the tokens this row may take, bit t % 32 of word t / 32 for token t, as
    // many words as the vocabulary needs; empty: any token. The others count as logits of -inf
    // before anything else (docs/SAMPLING.md).
    std::vector<uint32_t> allowed;
};

struct StepMessage {
    uint64_t step_id = 0;
    bool want_logits = false;      // return every out row's logits
    std::string comm_name;         // the group's host communicator ("" with one rank)
    uint64_t comm_generation = 0;  // a new generation: attach before running the step
    step::StepBatch batch;
    std::vector<SampleSpec> samples;  // one per out row, or empty: no sampling
    // Pipelined steps: token row i < fed_from.size() takes the token picked for out row
    // fed_from[i] of the step before this one, which every rank picks alike (its value in
    // batch.tokens is a placeholder). A worker refuses it unless it ran that step just before.
    std::vector<int32_t> fed_from;
};

struct Sampled {
    int32_t token = 0;
    float logprob = 0.0f;
    std::vector<step::TokenLogprob> top;
};

struct ResultMessage {
    uint64_t step_id = 0;
    int32_t status = 0;  // 0 ok
    std::string error;
    std::vector<Sampled> tokens;  // per out row when the step sampled
    std::vector<float> logits;    // out rows x vocab when asked
    // Embeddings: the final normed hidden state of each of the step's hidden_ids rows, in order,
    // f32 [hidden_ids.size(), hidden_width] (rank 0's; empty when the step named none)
    int32_t hidden_width = 0;
    std::vector<float> hidden;
};

// Exact encoded sizes without encoding (encode(m).size() == encoded_size(m)): the scheduler keeps
// each step within what the transport carries, row by row, while it builds the step.
size_t encoded_size(const SampleSpec& s);  // one spec's bytes
size_t encoded_size(const StepMessage& m);
inline constexpr size_t kStepRowBytes = 3 * 4;    // a sequence's cu_seqlens, seq_ids and (at most one) out id entries
inline constexpr size_t kStepTokenBytes = 2 * 4;  // a token and its position
inline constexpr size_t kStepFedBytes = 4;        // a fed row's fed_from entry

std::string encode(const StepMessage& m);
std::string encode(const ResultMessage& m);
// Throw radiance::Error naming the malformed field.
StepMessage decode_step(const std::string& bytes);
ResultMessage decode_result(const std::string& bytes);

}  // namespace radiance::ipc
