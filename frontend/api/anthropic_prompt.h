// anthropic_prompt.h: an Anthropic Messages body as the chat template's input: `system`, the
// messages (text, tool_use and tool_result blocks mapped onto OpenAI-shaped assistant tool_calls
// and tool messages, as transformers' templates take them), the tools, and the prompt's tokens.
// Shared by POST /v1/messages and POST /v1/messages/count_tokens.
#pragma once
#include <cstdint>
#include <vector>

#include "api_state.h"
#include "tool_calls/anthropic_tools.h"

namespace radiance::frontend {

struct AnthropicPrompt {
    ordered_json messages;  // chat-template messages
    tools::AnthropicTools tools;
    bool prefill = false;  // a final assistant message the reply continues
    std::vector<int32_t> tokens;
};

// 400s name the place as Anthropic does ("messages.1.content.0.type").
AnthropicPrompt read_anthropic_prompt(const ApiState& api, const ordered_json& body);

}  // namespace radiance::frontend
