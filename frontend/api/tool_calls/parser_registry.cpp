// The parsers by name (--tool-call-parser), and the one a chat template calls for.
#include "tool_parsers.h"
#include "wire_output.h"

namespace radiance::frontend::tools {

namespace {

const std::vector<const ToolCallParser*>& all() {
    static const std::vector<const ToolCallParser*> parsers = {&hermes_parser(), &llama3_json_parser(), &mistral_parser(), &json_parser()};
    return parsers;
}

}  // namespace

std::string ToolCallParser::new_call_id() const { return new_request_id("call_"); }

const ToolCallParser* find_tool_parser(std::string_view name) {
    for (const ToolCallParser* p : all())
        if (p->name() == name) return p;
    return nullptr;
}

std::vector<std::string> tool_parser_names() {
    std::vector<std::string> names;
    for (const ToolCallParser* p : all()) names.emplace_back(p->name());
    return names;
}

const ToolCallParser& detect_tool_parser(std::string_view t) {
    if (t.find("<tool_call>") != std::string_view::npos) return hermes_parser();
    if (t.find("[TOOL_CALLS]") != std::string_view::npos) return mistral_parser();
    // Llama 3.1's template has <|python_tag|>; 3.2's and 3.3's describe the JSON they want.
    if (t.find("<|python_tag|>") != std::string_view::npos ||
        t.find("\"parameters\": dictionary of argument name") != std::string_view::npos)
        return llama3_json_parser();
    return json_parser();
}

}  // namespace radiance::frontend::tools
