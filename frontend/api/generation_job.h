// generation_job.h: one HTTP request's generations (n choices, or one per prompt of a batch) as
// the wire formats see them: token events in, text deltas out, with the detokenizer, the stop
// strings and the stop tokens applied, and every choice cancelled when the client goes.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "generation.h"
#include "http_server.h"
#include "radiance/text/tokenizer.h"

namespace radiance::grammar {
class CompiledGrammar;
}

namespace radiance::frontend {

struct ChoicePlan {
    std::vector<int32_t> prompt;
    SamplingParams sampling;
    int max_tokens = 16;
    std::shared_ptr<const grammar::CompiledGrammar> grammar;  // structured output, or null
};

struct JobPlan {
    std::vector<ChoicePlan> choices;
    std::vector<std::string> stop;        // stop strings: never returned, never cut
    std::vector<int32_t> stop_token_ids;  // end a choice; not part of its text or tokens
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
    bool skip_special_tokens = true;
    std::string cache_salt;  // GenerationRequest::cache_salt of every choice
};

// Aborted: the server cut it short (a shutdown past its timeout); the text so far is answered,
// with a finish reason saying so. Cancelled: the client left, or it ended before it began.
enum class ChoiceEnd { StopToken, StopString, Length, Aborted, Cancelled, Error };

// A token's text as the stream shows it, in the context of the prompt and the tokens before
// it: `text` is what it made final ("" while a character it starts is incomplete; the token
// completing it carries the whole character), `bytes` the raw bytes it contributes. Joined
// over a choice, texts give its text and bytes give the same text's bytes.
struct TokenPiece {
    std::string text;
    std::string bytes;
};

// A generated token with its pieces, and each top_logprobs alternative's piece had it been
// chosen instead.
struct ShownToken {
    TokenEvent event;
    TokenPiece piece;
    std::vector<TokenPiece> top;  // parallel to event.top
};

struct ChoiceDelta {
    std::string text;                // newly final text
    std::vector<ShownToken> tokens;  // tokens received since the last delta (text may lag them)
};

struct ChoiceResult {
    ChoiceEnd end = ChoiceEnd::Length;
    std::string stop_string;         // which one, for ChoiceEnd::StopString
    std::string error;               // for ChoiceEnd::Error
    std::string text;                // all of it
    std::vector<ShownToken> tokens;  // all of them, stop tokens excluded
    int prompt_tokens = 0;
    int completion_tokens = 0;  // tokens the model generated, a final stop token included
};

// A wire format's view of a job. Calls come with the job's lock held, from the service's
// threads (or the handler's, when the service answers inside submit()): they must not block.
class JobListener {
public:
    virtual ~JobListener() = default;
    virtual void on_delta(size_t choice, const ChoiceDelta& delta) {}
    virtual void on_choice_end(size_t choice, const ChoiceResult& result) {}
    virtual void on_job_end(const std::vector<ChoiceResult>& results) = 0;  // once, last
};

// Submits every choice and cancels them all when `writer`'s client goes. A refusal (QueueFull,
// NotReady, BadRequest) cancels the choices already submitted and throws ApiError; the listener
// then hears nothing more.
void start_job(GenerationService& service, const text::Tokenizer& tokenizer, JobPlan plan, std::shared_ptr<JobListener> listener,
               const std::shared_ptr<StreamWriter>& writer);

// start_job, then the handler's reply: an SSE stream the listener writes as the job runs
// (`stream`), or a deferred answer the listener sends when the job ends.
Reply reply_with_job(GenerationService& service, const text::Tokenizer& tokenizer, JobPlan plan, std::shared_ptr<JobListener> listener,
                     const std::shared_ptr<StreamWriter>& writer, const Request& req, bool stream);

}  // namespace radiance::frontend
