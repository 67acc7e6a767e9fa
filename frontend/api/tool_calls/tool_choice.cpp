#include "tool_choice.h"

#include <set>

#include "api_error.h"
#include "api_state.h"

namespace radiance::frontend::tools {

std::vector<ToolSpec> read_openai_tool_list(const ordered_json& body) {
    std::vector<ToolSpec> list;
    auto tools = body.find("tools");
    if (tools == body.end() || tools->is_null()) return list;
    if (!tools->is_array()) throw bad_request("'tools' must be an array of {\"type\": \"function\", \"function\": {...}}", "tools");
    std::set<std::string> names;
    for (size_t i = 0; i < tools->size(); ++i) {
        const auto& t = (*tools)[i];
        const std::string p = "tools[" + std::to_string(i) + "]";
        if (!t.is_object()) throw bad_request("'" + p + "' must be an object", p);
        auto type = t.find("type");
        if (type != t.end() && !(type->is_string() && *type == "function"))
            throw bad_request("'" + p + ".type' must be \"function\"", p + ".type");
        auto fn = t.find("function");
        if (fn == t.end() || !fn->is_object()) throw bad_request("'" + p + ".function' must be an object with a 'name'", p + ".function");
        auto name = fn->find("name");
        if (name == fn->end() || !name->is_string() || name->get_ref<const std::string&>().empty())
            throw bad_request("'" + p + ".function.name' must be a non-empty string", p + ".function.name");
        if (!names.insert(name->get<std::string>()).second)
            throw bad_request("'" + p + ".function.name': the function '" + name->get<std::string>() + "' is listed twice",
                              p + ".function.name");
        if (auto d = fn->find("description"); d != fn->end() && !d->is_null() && !d->is_string())
            throw bad_request("'" + p + ".function.description' must be a string", p + ".function.description");
        ToolSpec spec{name->get<std::string>(), nullptr};
        if (auto params = fn->find("parameters"); params != fn->end() && !params->is_null()) {
            if (!params->is_object())
                throw bad_request("'" + p + ".function.parameters' must be a JSON Schema object", p + ".function.parameters");
            spec.parameters = *params;
        }
        list.push_back(std::move(spec));
    }
    return list;
}

ToolPlan read_openai_tools(const ordered_json& body, const ApiState& api) {
    ToolPlan plan;
    plan.tools = read_openai_tool_list(body);
    plan.parallel = get_bool(body, "parallel_tool_calls").value_or(true);
    plan.choice = plan.tools.empty() ? ToolChoice::None : ToolChoice::Auto;
    auto tc = body.find("tool_choice");
    if (tc != body.end() && !tc->is_null()) {
        if (tc->is_string()) {
            const std::string& s = tc->get_ref<const std::string&>();
            if (s == "none")
                plan.choice = ToolChoice::None;
            else if (s == "auto")
                plan.choice = ToolChoice::Auto;
            else if (s == "required")
                plan.choice = ToolChoice::Required;
            else
                throw bad_request(
                    "'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"function\": {\"name\": ...}}",
                    "tool_choice");
        } else if (tc->is_object()) {
            auto fn = tc->find("function");
            const ordered_json* name = nullptr;
            if (fn != tc->end() && fn->is_object())
                if (auto n = fn->find("name"); n != fn->end() && n->is_string()) name = &*n;
            if (tc->value("type", std::string()) != "function" || !name)
                throw bad_request("'tool_choice' as an object must be {\"type\": \"function\", \"function\": {\"name\": ...}}",
                                  "tool_choice");
            plan.choice = ToolChoice::Named;
            plan.named = name->get<std::string>();
        } else {
            throw bad_request("'tool_choice' must be a string or an object", "tool_choice");
        }
        if (plan.choice != ToolChoice::None && plan.tools.empty())
            throw bad_request("'tool_choice' is only allowed when 'tools' are given", "tool_choice");
        if (plan.choice == ToolChoice::Named) {
            bool found = false;
            for (const auto& t : plan.tools) found = found || t.name == plan.named;
            if (!found) throw bad_request("'tool_choice' names the function '" + plan.named + "', which is not in 'tools'", "tool_choice");
        }
    }
    finish_tool_plan(plan, api, [](size_t i) { return "tools[" + std::to_string(i) + "].function.parameters"; });
    return plan;
}

void finish_tool_plan(ToolPlan& plan, const ApiState& api, const std::function<std::string(size_t)>& schema_param) {
    if (plan.choice == ToolChoice::None) return;
    const ToolCallParser& parser = api.tool_parser();
    if (plan.choice == ToolChoice::Auto) {
        plan.parser = &parser;
        return;
    }
    // Required or Named: the output is made a call of the family's markup.
    plan.parser = &parser.constrained_parser();
    std::vector<ToolSpec> allowed;
    std::vector<size_t> index;  // into plan.tools, for errors
    for (size_t i = 0; i < plan.tools.size(); ++i)
        if (plan.choice == ToolChoice::Required || plan.tools[i].name == plan.named) {
            allowed.push_back(plan.tools[i]);
            index.push_back(i);
        }
    const CallMarkup markup = plan.parser->markup();
    const bool parallel = plan.parallel && plan.choice == ToolChoice::Required;
    try {
        plan.grammar = api.grammars().get_built(api, "tool_calls\n" + tool_grammar_key(markup, allowed, parallel),
                                                [&] { return tool_call_grammar(markup, allowed, parallel); });
    } catch (const ToolSchemaError& e) {
        if (e.tool >= index.size()) throw bad_request(std::string("tool_choice cannot be followed: ") + e.what(), "tool_choice");
        const std::string p = schema_param(index[e.tool]);
        throw bad_request("'" + p + "' cannot be used for tool_choice at " + e.where + ": " + e.what(), p);
    } catch (const grammar::GrammarError& e) {
        throw bad_request(std::string("the tools' parameters cannot be used for tool_choice: ") + e.what(), "tool_choice");
    }
}

}  // namespace radiance::frontend::tools
