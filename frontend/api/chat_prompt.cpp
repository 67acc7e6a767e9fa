#include "chat_prompt.h"

#include <set>

#include "api_error.h"
#include "radiance/jinja/error.h"

namespace radiance::frontend {

namespace {

// OpenAI content parts: [{"type": "text", "text": "..."}] become one string.
std::string join_text_parts(const ordered_json& parts, const std::string& param) {
    std::string text;
    for (size_t j = 0; j < parts.size(); ++j) {
        const auto& part = parts[j];
        const std::string p = param + "[" + std::to_string(j) + "]";
        if (!part.is_object()) throw bad_request("'" + p + "' must be an object", p);
        auto type = part.find("type");
        if (type == part.end() || !type->is_string() || *type != "text")
            throw bad_request("'" + p + ".type' must be \"text\": only text content is supported", p + ".type");
        auto t = part.find("text");
        if (t == part.end() || !t->is_string()) throw bad_request("'" + p + ".text' must be a string", p + ".text");
        if (j > 0) text += "\n";
        text += t->get_ref<const std::string&>();
    }
    return text;
}

void normalize_tool_calls(ordered_json& calls, const std::string& param) {
    if (!calls.is_array()) throw bad_request("'" + param + "' must be an array", param);
    for (auto& call : calls) {
        if (!call.is_object()) throw bad_request("'" + param + "' entries must be objects", param);
        auto fn = call.find("function");
        if (fn == call.end() || !fn->is_object()) continue;
        auto args = fn->find("arguments");
        if (args == fn->end() || !args->is_string()) continue;
        ordered_json parsed = ordered_json::parse(args->get_ref<const std::string&>(), nullptr, false);
        if (parsed.is_object()) *args = std::move(parsed);
    }
}

}  // namespace

ordered_json normalize_chat_messages(const ordered_json& messages, const std::string& param) {
    if (!messages.is_array()) throw bad_request("'" + param + "' must be an array of messages", param);
    if (messages.empty()) throw bad_request("'" + param + "' must not be empty", param);
    ordered_json out = ordered_json::array();
    for (size_t i = 0; i < messages.size(); ++i) {
        const std::string p = param + "[" + std::to_string(i) + "]";
        const auto& m = messages[i];
        if (!m.is_object()) throw bad_request("'" + p + "' must be an object", p);
        ordered_json msg = m;
        auto role = msg.find("role");
        if (role == msg.end() || !role->is_string()) throw bad_request("'" + p + ".role' must be a string", p + ".role");
        // OpenAI's roles, and Llama 3's tool-output role; any other would reach the template as
        // whatever its else-branch renders (an assistant turn in most).
        static const std::set<std::string> kRoles = {"system", "developer", "user", "assistant", "tool", "function", "ipython"};
        if (!kRoles.count(role->get<std::string>()))
            throw bad_request(
                "'" + p + ".role' must be one of system, developer, user, assistant, tool, function or ipython, not " + role->dump(),
                p + ".role");
        if (*role == "developer") *role = "system";
        auto content = msg.find("content");
        if (content == msg.end() || content->is_null())
            msg["content"] = "";  // templates do string ops on it
        else if (content->is_array())
            *content = join_text_parts(*content, p + ".content");
        else if (!content->is_string())
            throw bad_request("'" + p + ".content' must be a string or an array of text parts", p + ".content");
        if (auto calls = msg.find("tool_calls"); calls != msg.end() && !calls->is_null()) normalize_tool_calls(*calls, p + ".tool_calls");
        out.push_back(std::move(msg));
    }
    return out;
}

std::vector<int32_t> chat_prompt_tokens(const ApiState& api, const ordered_json& messages, const ChatPromptOptions& options,
                                        const std::string& param) {
    ordered_json context = {{"messages", messages},
                            {"add_generation_prompt", options.add_generation_prompt},
                            {"bos_token", api.ctx().bos_token},
                            {"eos_token", api.ctx().eos_token}};
    if (options.tools && !options.tools->is_null()) context["tools"] = *options.tools;
    if (options.continue_final_message) {
        context["continue_final_message"] = true;
        context["add_generation_prompt"] = false;
    }
    if (options.template_kwargs) {
        if (!options.template_kwargs->is_object()) throw bad_request("'chat_template_kwargs' must be an object", "chat_template_kwargs");
        for (auto it = options.template_kwargs->begin(); it != options.template_kwargs->end(); ++it)
            if (it.key() != "messages") context[it.key()] = it.value();
    }
    std::string text;
    try {
        text = api.chat_template().render(context);
    } catch (const jinja::Error& e) {
        throw bad_request(std::string("the chat template could not render these messages: ") + e.what(), param);
    }
    return api.tokenizer().encode(text, /*add_special_tokens=*/false);
}

}  // namespace radiance::frontend
