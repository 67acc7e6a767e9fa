#include "openai_tool_wire.h"

namespace radiance::frontend::tools {

ordered_json openai_tool_calls(const std::vector<ToolCall>& calls) {
    ordered_json out = ordered_json::array();
    for (const auto& c : calls)
        out.push_back({{"id", c.id}, {"type", "function"}, {"function", {{"name", c.name}, {"arguments", c.arguments}}}});
    return out;
}

ordered_json openai_tool_call_deltas(const std::vector<CallDelta>& calls) {
    ordered_json out = ordered_json::array();
    for (const auto& c : calls) {
        ordered_json d = {{"index", c.index}};
        if (!c.id.empty()) {
            d["id"] = c.id;
            d["type"] = "function";
            d["function"] = {{"name", c.name}, {"arguments", c.arguments}};
        } else {
            d["function"] = {{"arguments", c.arguments}};
        }
        out.push_back(std::move(d));
    }
    return out;
}

}  // namespace radiance::frontend::tools
