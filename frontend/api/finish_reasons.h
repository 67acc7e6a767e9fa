// finish_reasons.h: how each wire format names the end of a choice, and the error a failed
// choice becomes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "api_error.h"
#include "generation_job.h"

namespace radiance::frontend {

// OpenAI: "stop" (stop token or stop string), "length", or "abort" (vLLM's word) for a choice the
// server cut short.
inline const char* openai_finish_reason(ChoiceEnd e) {
    if (e == ChoiceEnd::Length) return "length";
    return e == ChoiceEnd::Aborted ? "abort" : "stop";
}

// Anthropic: "end_turn", "stop_sequence", "max_tokens", or "pause_turn" for a turn the server cut
// short: as Anthropic means it, the client may send the partial turn back to have it continued.
inline const char* anthropic_stop_reason(ChoiceEnd e) {
    if (e == ChoiceEnd::Length) return "max_tokens";
    if (e == ChoiceEnd::Aborted) return "pause_turn";
    return e == ChoiceEnd::StopString ? "stop_sequence" : "end_turn";
}

// llama-server: "eos", "word", "limit", or "none" (its word for a stop of no such kind) for a
// generation the server cut short.
inline const char* llama_stop_type(ChoiceEnd e) {
    if (e == ChoiceEnd::Length) return "limit";
    if (e == ChoiceEnd::Aborted) return "none";
    return e == ChoiceEnd::StopString ? "word" : "eos";
}

// The first choice that did not end normally, as an error to answer with.
inline std::optional<ApiError> failed_choice(const std::vector<ChoiceResult>& results) {
    for (const auto& r : results) {
        if (r.end == ChoiceEnd::Error) return ApiError(http::status::internal_server_error, "generation failed: " + r.error);
        if (r.end == ChoiceEnd::Cancelled)
            return ApiError(http::status::service_unavailable, "the generation was cancelled before it finished");
    }
    return std::nullopt;
}

inline int total_completion_tokens(const std::vector<ChoiceResult>& results) {
    int n = 0;
    for (const auto& r : results) n += r.completion_tokens;
    return n;
}

}  // namespace radiance::frontend
