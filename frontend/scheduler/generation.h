// generation.h: the boundary between the wire APIs and the scheduler.
//
// The API layer turns an HTTP request into GenerationRequests (token ids in, sampling parameters,
// limits) and receives tokens as they are sampled. Everything textual (chat templates, stop
// strings, detokenisation, response formats) stays in the API layer; everything about batching,
// KV blocks, workers and restarts stays behind GenerationService.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "radiance/step/sampling_params.h"

namespace radiance::frontend {

// The most logit_bias entries one request may carry (a 400 above it). Every step carries each
// sampling row's bias, so the cap bounds a step's size (the shared-memory slot is sized for it);
// clients send a handful (OpenAI's examples ban or boost a few tokens).
inline constexpr size_t kMaxLogitBias = 1024;

// The step contract's settings (radiance/step/sampling_params.h): one type from the API fields
// to the worker's sampler.
using step::SamplingParams;

// Which tokens a request may generate next (structured output: a grammar's matcher). The
// scheduler asks for each sampled row's mask and sends it with the row (ipc::SampleSpec::allowed,
// applied before sampling on the host or the card), then reports every token generated. Calls
// come from the scheduler's thread, one request at a time; they must not block.
class TokenConstraint {
public:
    virtual ~TokenConstraint() = default;
    // Fills `words` (one bit per vocabulary id: bit t % 32 of word t / 32) with the tokens allowed
    // next, the request's stop tokens among them where the constraint may end. False when none
    // is: the request ends in error (never waits for a token that cannot come).
    virtual bool allowed(std::span<uint32_t> words) = 0;
    // The request generated `token` (not a stop token); false when the constraint refuses it.
    virtual bool accept(int32_t token) = 0;
    // Nothing may follow what was generated: the request is complete (it ends as stopped).
    virtual bool complete() const = 0;
};

// How an embedding request's hidden rows become one vector (sentence-transformers' pooling modes;
// decoder embedders such as Qwen3-Embedding pool the last token).
enum class Pooling { Last, Mean };

struct GenerationRequest {
    std::vector<int32_t> prompt;
    // An embedding request: the prompt is prefilled and nothing is generated or sampled (sampling,
    // constraint, max_tokens and stop ids are ignored); the final normed hidden state of its last
    // row, or the mean of all its rows, reaches the sink's on_embedding (not normalised: the API
    // layer truncates to `dimensions` and then normalises), then on_finish(Stop). Its KV blocks
    // go back once answered; a Mean request never starts from cached blocks (it needs every row).
    std::optional<Pooling> embed;
    SamplingParams sampling;
    std::shared_ptr<TokenConstraint> constraint;  // structured output, or null
    int max_tokens = 16;                          // generated tokens at most (>= 1)
    std::vector<int32_t> stop_token_ids;          // end the request when sampled (EOS and friends)
    // Requests share cached KV blocks only when their salts are equal (vLLM's cache_salt: a
    // tenant's prompts cannot be timed against another's); "" for none.
    std::string cache_salt;
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

using step::TokenLogprob;

struct TokenEvent {
    int32_t token = 0;
    float logprob = 0;              // valid when top_logprobs >= 0
    std::vector<TokenLogprob> top;  // top_logprobs alternatives, most likely first
};

enum class FinishReason {
    Length,     // max_tokens reached
    Stop,       // a stop token was sampled (the API layer also cancels on stop strings)
    Cancelled,  // cancel() was called (client gone, stop string seen)
    Aborted,    // the server ended it unfinished (a shutdown past its timeout): what came is kept
    Error,      // the request cannot continue (message says why: deadline, context, a rank lost for good)
};

// Receives one request's progress. Calls come from a scheduler thread and must not block;
// on_finish is called exactly once, last.
class GenerationSink {
public:
    virtual ~GenerationSink() = default;
    virtual void on_tokens(const std::vector<TokenEvent>& tokens) = 0;
    // An embedding request's pooled vector (GenerationRequest::embed), once, before on_finish.
    virtual void on_embedding(const std::vector<float>& pooled) { (void)pooled; }
    virtual void on_finish(FinishReason reason, const std::string& error) = 0;
};

struct ModelInfo {
    std::string name;
    int64_t context_length = 0;  // prompt + generated tokens must fit
    int64_t vocab_size = 0;
    int64_t hidden_size = 0;  // an embedding's full width (0: the service embeds nothing)
};

// submit() refusals the API layer maps to HTTP statuses.
struct QueueFull : std::runtime_error {
    using std::runtime_error::runtime_error;
};  // 429
struct NotReady : std::runtime_error {
    using std::runtime_error::runtime_error;
};                                        // 503
struct BadRequest : std::runtime_error {  // 400
    std::string param;
    BadRequest(const std::string& what, std::string p) : std::runtime_error(what), param(std::move(p)) {}
};

class GenerationService {
public:
    virtual ~GenerationService() = default;
    // Queues a request; returns its id. Throws QueueFull, NotReady or BadRequest.
    virtual uint64_t submit(GenerationRequest req, std::shared_ptr<GenerationSink> sink) = 0;
    // Stops a request; its KV blocks go back once no step in flight holds them (at the latest when
    // the step sent before the cancel is answered); its sink gets on_finish(why), and that is
    // the finish reason metrics count: Cancelled for a client that left, Stop when the API layer
    // matched a stop string in the text.
    virtual void cancel(uint64_t id, FinishReason why = FinishReason::Cancelled) = 0;
    virtual bool ready() const = 0;
    virtual ModelInfo model_info() const = 0;
    // Load figures for GET /props (KV blocks used/total, queue length, ...); empty when none.
    virtual nlohmann::json stats_json() const { return {}; }
};

}  // namespace radiance::frontend
