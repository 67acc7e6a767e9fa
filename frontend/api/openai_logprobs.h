// openai_logprobs.h: token logprobs in the two OpenAI shapes (and llama-server's).
#pragma once
#include <vector>

#include "generation.h"
#include "json_io.h"
#include "radiance/text/tokenizer.h"

namespace radiance::frontend {

// Chat: {"content": [{"token", "logprob", "bytes", "top_logprobs": [{"token", "logprob", "bytes"}]}],
// "refusal": null}. A token's text is its own decode, so a piece of a multi-byte character shows
// as U+FFFD while the concatenated text is right.
ordered_json chat_logprobs(const text::Tokenizer& tok, const std::vector<TokenEvent>& tokens);

// Completions: {"tokens", "token_logprobs", "top_logprobs": [{token: logprob}], "text_offset"};
// offsets count bytes from `offset` on, which the caller advances across stream chunks.
ordered_json completion_logprobs(const text::Tokenizer& tok, const std::vector<TokenEvent>& tokens, size_t& offset);

// llama-server: [{"id", "token", "logprob", "bytes", "top_logprobs": [{"id", "token", "logprob", "bytes"}]}].
ordered_json llama_probabilities(const text::Tokenizer& tok, const std::vector<TokenEvent>& tokens);

}  // namespace radiance::frontend
