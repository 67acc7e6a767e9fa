#include "responses_fields.h"

#include <set>

#include "api_error.h"
#include "api_state.h"
#include "structured_output.h"

namespace radiance::frontend {

namespace {

tools::ToolChoice read_choice(const ordered_json& tc, std::string& named) {
    if (tc.is_string()) {
        const std::string& s = tc.get_ref<const std::string&>();
        if (s == "none") return tools::ToolChoice::None;
        if (s == "auto") return tools::ToolChoice::Auto;
        if (s == "required") return tools::ToolChoice::Required;
    } else if (tc.is_object() && tc.value("type", std::string()) == "function") {
        auto name = tc.find("name");
        if (name != tc.end() && name->is_string()) {
            named = name->get<std::string>();
            return tools::ToolChoice::Named;
        }
    }
    throw bad_request("'tool_choice' must be \"none\", \"auto\", \"required\" or {\"type\": \"function\", \"name\": ...}", "tool_choice");
}

}  // namespace

ResponsesTools read_responses_tools(const ordered_json& body, const ApiState& api) {
    ResponsesTools out;
    tools::ToolPlan& plan = out.plan;
    auto list = body.find("tools");
    if (list != body.end() && !list->is_null()) {
        if (!list->is_array()) throw bad_request("'tools' must be an array of {\"type\": \"function\", \"name\", ...}", "tools");
        out.template_tools = ordered_json::array();
        std::set<std::string> names;
        for (size_t i = 0; i < list->size(); ++i) {
            const auto& t = (*list)[i];
            const std::string p = "tools[" + std::to_string(i) + "]";
            if (!t.is_object()) throw bad_request("'" + p + "' must be an object", p);
            // Built-in tools (web_search, file_search, ...) need OpenAI's servers; only functions run here.
            auto type = t.find("type");
            if (type == t.end() || !type->is_string() || *type != "function")
                throw bad_request("'" + p + ".type' must be \"function\": only function tools are supported", p + ".type");
            auto name = t.find("name");
            if (name == t.end() || !name->is_string() || name->get_ref<const std::string&>().empty())
                throw bad_request("'" + p + ".name' must be a non-empty string", p + ".name");
            if (!names.insert(name->get<std::string>()).second)
                throw bad_request("'" + p + ".name': the function '" + name->get<std::string>() + "' is listed twice", p + ".name");
            ordered_json fn = {{"name", *name}};
            if (auto d = t.find("description"); d != t.end() && !d->is_null()) {
                if (!d->is_string()) throw bad_request("'" + p + ".description' must be a string", p + ".description");
                fn["description"] = *d;
            }
            tools::ToolSpec spec{name->get<std::string>(), nullptr};
            if (auto params = t.find("parameters"); params != t.end() && !params->is_null()) {
                if (!params->is_object()) throw bad_request("'" + p + ".parameters' must be a JSON Schema object", p + ".parameters");
                fn["parameters"] = *params;
                spec.parameters = *params;
            }
            if (auto s = t.find("strict"); s != t.end() && !s->is_null() && !s->is_boolean())
                throw bad_request("'" + p + ".strict' must be a boolean", p + ".strict");
            out.template_tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
            plan.tools.push_back(std::move(spec));
        }
        if (out.template_tools.empty()) out.template_tools = nullptr;
    }
    plan.parallel = get_bool(body, "parallel_tool_calls").value_or(true);
    plan.choice = plan.tools.empty() ? tools::ToolChoice::None : tools::ToolChoice::Auto;
    auto tc = body.find("tool_choice");
    if (tc != body.end() && !tc->is_null()) {
        plan.choice = read_choice(*tc, plan.named);
        if (plan.choice != tools::ToolChoice::None && plan.tools.empty())
            throw bad_request("'tool_choice' is only allowed when 'tools' are given", "tool_choice");
        if (plan.choice == tools::ToolChoice::Named) {
            bool found = false;
            for (const auto& t : plan.tools) found = found || t.name == plan.named;
            if (!found) throw bad_request("'tool_choice' names the function '" + plan.named + "', which is not in 'tools'", "tool_choice");
        }
    }
    tools::finish_tool_plan(plan, api, [](size_t i) { return "tools[" + std::to_string(i) + "].parameters"; });
    return out;
}

std::shared_ptr<const grammar::CompiledGrammar> read_responses_text_format(const ordered_json& body, const ApiState& api) {
    auto text = body.find("text");
    if (text == body.end() || text->is_null()) return nullptr;
    if (!text->is_object()) throw bad_request("'text' must be an object", "text");
    auto format = text->find("format");
    if (format == text->end() || format->is_null()) return nullptr;
    if (!format->is_object()) throw bad_request("'text.format' must be an object", "text.format");
    auto type = format->find("type");
    if (type == format->end() || !type->is_string())
        throw bad_request("'text.format.type' must be \"text\", \"json_object\" or \"json_schema\"", "text.format.type");
    // As response_format, whose reader compiles and caches it; its errors are renamed to this
    // request's fields.
    ordered_json rf;
    if (*type == "text") return nullptr;
    if (*type == "json_object") {
        rf = {{"type", "json_object"}};
    } else if (*type == "json_schema") {
        auto schema = format->find("schema");
        if (schema == format->end() || !schema->is_object())
            throw bad_request("'text.format.schema' must be a JSON Schema object", "text.format.schema");
        if (auto s = format->find("strict"); s != format->end() && !s->is_null() && !s->is_boolean())
            throw bad_request("'text.format.strict' must be a boolean", "text.format.strict");
        rf = {{"type", "json_schema"}, {"json_schema", {{"schema", *schema}}}};
    } else {
        throw bad_request("'text.format.type' must be \"text\", \"json_object\" or \"json_schema\"", "text.format.type");
    }
    try {
        return read_openai_constraint(ordered_json{{"response_format", std::move(rf)}}, api);
    } catch (ApiError& e) {
        static const std::string kSchema = "response_format.json_schema.schema", kFormat = "response_format";
        std::string msg = e.what();
        for (const auto* from : {&kSchema, &kFormat})
            for (size_t at; (at = msg.find(*from)) != std::string::npos;)
                msg.replace(at, from->size(), from == &kSchema ? "text.format.schema" : "text.format");
        std::string param = e.param;
        if (param.rfind(kSchema, 0) == 0)
            param = "text.format.schema" + param.substr(kSchema.size());
        else if (param.rfind(kFormat, 0) == 0)
            param = "text.format" + param.substr(kFormat.size());
        throw ApiError(e.status, msg, param, e.code);
    }
}

}  // namespace radiance::frontend
