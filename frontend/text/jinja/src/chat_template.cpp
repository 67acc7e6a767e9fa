#include "radiance/jinja/chat_template.h"

#include "radiance/jinja/json_convert.h"
#include "unicode.h"
#include "value_ops.h"

namespace radiance::jinja {

namespace {

[[noreturn]] void value_error(const std::string& msg) { throw Error(Error::Kind::Runtime, msg); }

// The text continue_final_message continues: the final message's content, or the last
// text block of list-valued content.
std::string final_message_text(const Value& messages) {
    const ValueList& list = messages.as_list();
    if (list.empty()) value_error("continue_final_message is set but there are no messages");
    const Value* content = list.back().find("content");
    if (!content) value_error("continue_final_message is set but the final message has no content");
    if (content->is_string()) return content->as_string();
    if (content->is_list()) {
        for (auto it = content->as_list().rbegin(); it != content->as_list().rend(); ++it)
            if (const Value* text = it->find("text")) return detail::to_str(*text);
        value_error("continue_final_message is set but we could not find any text to continue in the final message!");
    }
    return detail::to_str(*content);
}

// transformers cuts the rendered chat right after the final message so generation
// continues it (rather than starting a new turn).
std::string cut_after_final_message(const std::string& rendered, const std::string& final_message) {
    const std::string stripped = detail::py_strip(final_message, nullptr, true, true);
    const std::string lstripped = detail::py_strip(final_message, nullptr, true, false);
    const size_t loc = rendered.rfind(stripped);
    if (loc == std::string::npos)
        value_error(
            "continue_final_message is set but the final message does not appear in the chat after applying "
            "the chat template!");
    // The template kept the message's trailing whitespace: keep it too.
    if (rendered.compare(loc, lstripped.size(), final_message) == 0) return rendered.substr(0, loc + lstripped.size());
    return rendered.substr(0, loc + stripped.size());
}

}  // namespace

std::string ChatTemplate::render(const Value& context) const {
    if (!context.is_dict()) throw Error(Error::Kind::Runtime, "the chat template context must be a JSON object");
    DictItems vars;
    bool continue_final = false;
    bool add_generation_prompt = false;
    for (const auto& [k, v] : context.as_dict()) {
        const std::string& key = k.as_string();
        if (key == "continue_final_message") {  // an argument of apply_chat_template, not a template variable
            continue_final = detail::truthy(v);
            continue;
        }
        if (key == "add_generation_prompt") add_generation_prompt = detail::truthy(v);
        vars.emplace_back(k, v);
    }
    for (const char* key : {"tools", "documents"})
        if (!context.find(std::string(key))) vars.emplace_back(Value(key), Value::none());
    if (!context.find(std::string("add_generation_prompt"))) vars.emplace_back(Value("add_generation_prompt"), Value(false));
    if (continue_final && add_generation_prompt)
        value_error(
            "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message when "
            "you want the model to continue the final message, and add_generation_prompt when you want to add a "
            "header that will prompt it to start a new assistant message instead.");
    std::string rendered = template_.render(Value::dict(std::move(vars)));
    if (continue_final) {
        const Value* messages = context.find(std::string("messages"));
        rendered = cut_after_final_message(rendered, final_message_text(messages ? *messages : Value()));
    }
    return rendered;
}

std::string ChatTemplate::render(const nlohmann::ordered_json& context) const { return render(from_json(context)); }
std::string ChatTemplate::render(const nlohmann::json& context) const { return render(from_json(context)); }

std::string render_chat_template(const std::string& tmpl, const nlohmann::ordered_json& context) {
    return ChatTemplate(tmpl).render(context);
}

std::string render_chat_template(const std::string& tmpl, const nlohmann::json& context) { return ChatTemplate(tmpl).render(context); }

}  // namespace radiance::jinja
