// anthropic_tools.h: Anthropic's tools on the same plan as OpenAI's (tool_choice.h): `tools`
// ({"name", "description", "input_schema"}) become the template's OpenAI-shaped tools, and
// `tool_choice` ({"type": "auto" | "any" | "tool" | "none", "name", "disable_parallel_tool_use"})
// auto, required, named or none. 400s name the place as Anthropic does: "tools.2.name".
#pragma once
#include "tool_choice.h"

namespace radiance::frontend::tools {

struct AnthropicTools {
    ordered_json template_tools;  // for the chat template: [{"type": "function", "function": {...}}], or null
    ToolPlan plan;
};

AnthropicTools read_anthropic_tools(const ordered_json& body, const ApiState& api);

}  // namespace radiance::frontend::tools
