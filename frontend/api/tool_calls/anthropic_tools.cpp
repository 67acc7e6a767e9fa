#include "anthropic_tools.h"

#include <set>

#include "api_error.h"

namespace radiance::frontend::tools {

namespace {

void read_tool_list(const ordered_json& body, AnthropicTools& out) {
    auto tools = body.find("tools");
    if (tools == body.end() || tools->is_null()) return;
    if (!tools->is_array()) throw bad_request("tools: Input should be a valid list", "tools");
    out.template_tools = ordered_json::array();
    std::set<std::string> names;
    for (size_t i = 0; i < tools->size(); ++i) {
        const auto& t = (*tools)[i];
        const std::string p = "tools." + std::to_string(i);
        if (!t.is_object()) throw bad_request(p + ": Input should be an object", p);
        // Anthropic's server tools (bash, web search, ...) run on Anthropic's side: nothing here can.
        if (auto type = t.find("type"); type != t.end() && !type->is_null() && !(type->is_string() && *type == "custom"))
            throw bad_request(p + ".type: only custom tools (name, description, input_schema) are supported", p + ".type");
        auto name = t.find("name");
        if (name == t.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
            throw bad_request(p + ".name: Field required (a non-empty string)", p + ".name");
        if (!names.insert(name->get<std::string>()).second)
            throw bad_request(p + ".name: the tool '" + name->get<std::string>() + "' is listed twice", p + ".name");
        auto schema = t.find("input_schema");
        if (schema == t.end() || !schema->is_object())
            throw bad_request(p + ".input_schema: Field required (a JSON Schema object)", p + ".input_schema");
        ordered_json fn = {{"name", *name}};
        if (auto d = t.find("description"); d != t.end() && !d->is_null()) {
            if (!d->is_string()) throw bad_request(p + ".description: Input should be a valid string", p + ".description");
            fn["description"] = *d;
        }
        fn["parameters"] = *schema;
        out.template_tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
        out.plan.tools.push_back({name->get<std::string>(), *schema});
    }
}

}  // namespace

AnthropicTools read_anthropic_tools(const ordered_json& body, const ApiState& api) {
    AnthropicTools out;
    read_tool_list(body, out);
    ToolPlan& plan = out.plan;
    plan.choice = plan.tools.empty() ? ToolChoice::None : ToolChoice::Auto;
    auto tc = body.find("tool_choice");
    if (tc != body.end() && !tc->is_null()) {
        if (!tc->is_object()) throw bad_request("tool_choice: Input should be an object with a 'type'", "tool_choice");
        const std::string type = tc->value("type", std::string());
        if (type == "auto")
            plan.choice = ToolChoice::Auto;
        else if (type == "any")
            plan.choice = ToolChoice::Required;
        else if (type == "none")
            plan.choice = ToolChoice::None;
        else if (type == "tool") {
            auto name = tc->find("name");
            if (name == tc->end() || !name->is_string()) throw bad_request("tool_choice.name: Field required", "tool_choice.name");
            plan.choice = ToolChoice::Named;
            plan.named = name->get<std::string>();
            bool found = false;
            for (const auto& t : plan.tools) found = found || t.name == plan.named;
            if (!found) throw bad_request("tool_choice.name: the tool '" + plan.named + "' is not in 'tools'", "tool_choice.name");
        } else {
            throw bad_request("tool_choice.type: must be 'auto', 'any', 'tool' or 'none'", "tool_choice.type");
        }
        if (auto d = tc->find("disable_parallel_tool_use"); d != tc->end() && !d->is_null()) {
            if (!d->is_boolean())
                throw bad_request("tool_choice.disable_parallel_tool_use: Input should be a valid boolean",
                                  "tool_choice.disable_parallel_tool_use");
            plan.parallel = !d->get<bool>();
        }
        if ((plan.choice == ToolChoice::Required || plan.choice == ToolChoice::Named) && plan.tools.empty())
            throw bad_request("tool_choice: '" + type + "' needs 'tools'", "tool_choice");
        if (plan.tools.empty()) plan.choice = ToolChoice::None;
    }
    finish_tool_plan(plan, api, [](size_t i) { return "tools." + std::to_string(i) + ".input_schema"; });
    return out;
}

}  // namespace radiance::frontend::tools
