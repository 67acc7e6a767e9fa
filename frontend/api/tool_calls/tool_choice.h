// tool_choice.h: what a request's tools ask of its generation. OpenAI's `tools`, `tool_choice`
// and `parallel_tool_calls` read and checked here (Anthropic's are mapped onto the same plan in
// anthropic_tools.h): which parser reads the output, and for `required` or a named function the
// grammar that makes the output a call.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "json_io.h"
#include "tool_call_parser.h"
#include "tool_grammar.h"

namespace radiance::grammar {
class CompiledGrammar;
}

namespace radiance::frontend {
class ApiState;
}

namespace radiance::frontend::tools {

enum class ToolChoice { None, Auto, Required, Named };

struct ToolPlan {
    ToolChoice choice = ToolChoice::None;
    std::vector<ToolSpec> tools;
    std::string named;     // the function of a Named choice
    bool parallel = true;  // more than one call may come
    // Reads the output into calls; null when nothing is read (no tools, or tool_choice none).
    const ToolCallParser* parser = nullptr;
    // Required and Named: generation is constrained to calls (the parser is then the one that
    // reads the constrained markup back).
    std::shared_ptr<const grammar::CompiledGrammar> grammar;
};

// The tools of an OpenAI body (null or absent: none): an array of {"type": "function",
// "function": {"name", "description", "parameters"}}, names unique. 400s name the place:
// "tools[2].function.name".
std::vector<ToolSpec> read_openai_tool_list(const ordered_json& body);

// tools, tool_choice ("none", "auto", "required", {"type": "function", "function": {"name"}}) and
// parallel_tool_calls of an OpenAI chat body, checked, with the server's parser and, where the
// choice forces a call, the compiled grammar.
ToolPlan read_openai_tools(const ordered_json& body, const ApiState& api);

// Fills plan.parser and plan.grammar from plan.choice (shared with Anthropic). A parameters
// schema the grammar cannot follow is a 400 on schema_param(i) naming the place in it.
void finish_tool_plan(ToolPlan& plan, const ApiState& api, const std::function<std::string(size_t)>& schema_param);

}  // namespace radiance::frontend::tools
