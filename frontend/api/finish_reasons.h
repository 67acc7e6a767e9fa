// finish_reasons.h: how each wire format names the end of a choice, and the error a failed
// choice becomes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "api_error.h"
#include "generation_job.h"

namespace radiance::frontend {

// OpenAI: "stop" (stop token or stop string) or "length".
inline const char* openai_finish_reason(ChoiceEnd e) { return e == ChoiceEnd::Length ? "length" : "stop"; }

// Anthropic: "end_turn", "stop_sequence" or "max_tokens".
inline const char* anthropic_stop_reason(ChoiceEnd e) {
    if (e == ChoiceEnd::Length) return "max_tokens";
    return e == ChoiceEnd::StopString ? "stop_sequence" : "end_turn";
}

// llama-server: "eos", "word" or "limit".
inline const char* llama_stop_type(ChoiceEnd e) {
    if (e == ChoiceEnd::Length) return "limit";
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
