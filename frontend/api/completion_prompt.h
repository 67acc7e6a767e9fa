// completion_prompt.h: the prompts of the completion endpoints (text or token ids) as ids.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "api_state.h"

namespace radiance::frontend {

struct PromptInput {
    std::vector<int32_t> ids;
    std::string text;  // as given, or the decoded ids (for echo)
};

// OpenAI /v1/completions "prompt": a string, an array of token ids, or a batch (an array of
// strings or of id arrays). Text is encoded with the tokenizer's special tokens (BOS).
std::vector<PromptInput> read_completion_prompts(const ApiState& api, const ordered_json& body);

// llama-server /completion "prompt": a string, or an array mixing token ids and strings (the
// strings encoded without special tokens; a BOS is added up front when the tokenizer adds one).
PromptInput read_llama_prompt(const ApiState& api, const ordered_json& body);

}  // namespace radiance::frontend
