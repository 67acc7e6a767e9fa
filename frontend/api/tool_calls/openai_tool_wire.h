// openai_tool_wire.h: tool calls as OpenAI's chat completions show them: message.tool_calls
// ({"id", "type": "function", "function": {"name", "arguments"}}) and, streamed, delta.tool_calls
// (a call's first delta with its index, id, type and name; then {"index", "function":
// {"arguments": fragment}}).
#pragma once
#include <vector>

#include "json_io.h"
#include "tool_call_stream.h"

namespace radiance::frontend::tools {

ordered_json openai_tool_calls(const std::vector<ToolCall>& calls);
ordered_json openai_tool_call_deltas(const std::vector<CallDelta>& calls);

}  // namespace radiance::frontend::tools
