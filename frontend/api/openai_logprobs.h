// openai_logprobs.h: token logprobs in the two OpenAI shapes (and llama-server's). A token's
// "token" is its text in context and "bytes" its raw bytes (TokenPiece, generation_job.h), so
// the tokens join to the choice's text and a piece of a multi-byte character shows as "" with
// its bytes, the token completing the character carrying it whole.
#pragma once
#include <string_view>
#include <vector>

#include "generation_job.h"
#include "json_io.h"

namespace radiance::frontend {

// Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}],
// "refusal": null}.
ordered_json chat_logprobs(const std::vector<ShownToken>& tokens);

// Completions: {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}], "text_offset"};
// offsets count characters (code points, as OpenAI and vLLM do) from `offset` on, which the
// caller advances across stream chunks and starts after an echoed prompt.
ordered_json completion_logprobs(const std::vector<ShownToken>& tokens, size_t& offset);

// llama-server: [{"id", "token", "logprob", "bytes", "top_logprobs": [{"id", "token", "logprob", "bytes"}]}].
ordered_json llama_probabilities(const std::vector<ShownToken>& tokens);

// Characters in UTF-8 text.
size_t code_points(std::string_view utf8);

}  // namespace radiance::frontend
