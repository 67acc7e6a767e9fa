// responses_fields.h: the Responses API's fields whose chat-completions counterparts have another
// shape, read onto the same plans: flat tools ({"type": "function", "name", "description",
// "parameters", "strict"}) and tool_choice ("none", "auto", "required", {"type": "function",
// "name"}) onto a ToolPlan, and text.format ({"type": "text" | "json_object" | "json_schema",
// "name", "schema", "strict"}) onto response_format's constraint. 400s name the fields as the
// Responses request spells them: "tools[0].name", "text.format.schema".
#pragma once
#include <memory>

#include "json_io.h"
#include "tool_calls/tool_choice.h"

namespace radiance::grammar {
class CompiledGrammar;
}

namespace radiance::frontend {

class ApiState;

struct ResponsesTools {
    ordered_json template_tools;  // chat-shaped, for the chat template; null when none
    tools::ToolPlan plan;
};

ResponsesTools read_responses_tools(const ordered_json& body, const ApiState& api);

// text.format's constraint, or null ("text" or absent).
std::shared_ptr<const grammar::CompiledGrammar> read_responses_text_format(const ordered_json& body, const ApiState& api);

}  // namespace radiance::frontend
