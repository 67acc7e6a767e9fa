// chat_prompt.h: chat messages -> the model's chat template -> prompt token ids.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "api_state.h"

namespace radiance::frontend {

struct ChatPromptOptions {
    bool add_generation_prompt = true;
    bool continue_final_message = false;            // continue the last (assistant) message instead
    const ordered_json* tools = nullptr;            // passed through to the template
    const ordered_json* template_kwargs = nullptr;  // extra template variables (enable_thinking, ...)
};

// Messages in the shape Hugging Face chat templates expect: every message an object with a
// string role ("developer" becomes "system"), text content parts joined into one string (and
// missing or null content as "": templates such as Qwen3's do string operations on it),
// tool_calls' JSON-string arguments parsed into objects (as transformers passes them); other
// fields (name, tool_call_id, ...) pass through. Errors name the field: "messages[2].content".
ordered_json normalize_chat_messages(const ordered_json& messages, const std::string& param = "messages");

// Renders the template (bos_token/eos_token from the context) and encodes the text without
// adding special tokens: the template writes BOS itself. Template errors are 400s on `param`.
std::vector<int32_t> chat_prompt_tokens(const ApiState& api, const ordered_json& messages, const ChatPromptOptions& options,
                                        const std::string& param = "messages");

}  // namespace radiance::frontend
