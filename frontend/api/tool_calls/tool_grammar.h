// tool_grammar.h: the grammar a `required` or named tool_choice constrains generation to, so the
// output always parses: the family's markup (tool_call_parser.h: CallMarkup) around one call, or
// several when parallel calls are allowed, each {"name": <one of the tools>, "arguments": <JSON
// valid against that tool's parameters schema>}; or, for a family whose markup no grammar can
// write, the JSON array of such calls that vLLM constrains to.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "radiance/grammar/grammar.h"
#include "tool_call_parser.h"

namespace radiance::frontend::tools {

struct ToolSpec {
    std::string name;
    nlohmann::ordered_json parameters;  // a JSON Schema; null: any object
};

// A tool's parameters that cannot become a grammar: which tool, the place in its parameters
// (a JSON pointer) and why.
struct ToolSchemaError : std::runtime_error {
    size_t tool;
    std::string where;
    ToolSchemaError(size_t t, std::string at, const std::string& what) : std::runtime_error(what), tool(t), where(std::move(at)) {}
};

// Throws ToolSchemaError.
grammar::Grammar tool_call_grammar(const CallMarkup& markup, const std::vector<ToolSpec>& tools, bool parallel);

// The text that identifies that grammar (the compiled-grammar cache's key).
std::string tool_grammar_key(const CallMarkup& markup, const std::vector<ToolSpec>& tools, bool parallel);

}  // namespace radiance::frontend::tools
