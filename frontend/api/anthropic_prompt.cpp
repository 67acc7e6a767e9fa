#include "anthropic_prompt.h"

#include "api_error.h"
#include "chat_prompt.h"

namespace radiance::frontend {

namespace {

const ordered_json& field(const ordered_json& block, const char* key, const std::string& p) {
    auto it = block.find(key);
    if (it == block.end()) throw bad_request(p + "." + key + ": Field required", p + "." + key);
    return *it;
}

std::string string_field(const ordered_json& block, const char* key, const std::string& p) {
    const ordered_json& v = field(block, key, p);
    if (!v.is_string()) throw bad_request(p + "." + key + ": Input should be a valid string", p + "." + key);
    return v.get<std::string>();
}

// A block's type, checked against the kinds this role may send.
std::string block_type(const ordered_json& block, const std::string& p, bool user) {
    if (!block.is_object()) throw bad_request(p + ": must be a content block object", p);
    const std::string type = string_field(block, "type", p);
    if (type == "text" || (type == "tool_use" && !user) || (type == "tool_result" && user)) return type;
    if (type == "tool_use" || type == "tool_result")
        throw bad_request(p + ".type: '" + type + "' blocks belong in " + (user ? "assistant" : "user") + " messages", p + ".type");
    throw bad_request(p + ".type: only text, tool_use and tool_result blocks are supported, not '" + type + "'", p + ".type");
}

// A string, or text blocks joined (system prompts, tool results).
std::string text_of(const ordered_json& content, const std::string& param) {
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) throw bad_request(param + ": must be a string or an array of content blocks", param);
    std::string text;
    for (size_t j = 0; j < content.size(); ++j) {
        const std::string p = param + "." + std::to_string(j);
        if (!content[j].is_object() || content[j].value("type", std::string()) != "text")
            throw bad_request(p + ".type: only text blocks are supported here", p + ".type");
        text += string_field(content[j], "text", p);
    }
    return text;
}

// One Anthropic message as template messages: an assistant turn with its tool_use blocks as
// tool_calls (input objects as the arguments, as transformers passes them); a user turn's
// tool_result blocks as tool messages first (Anthropic puts them first), then its text.
void add_message(const ordered_json& m, const std::string& p, ordered_json& out) {
    if (!m.is_object()) throw bad_request(p + ": must be an object", p);
    auto role = m.find("role");
    if (role == m.end() || !role->is_string() || (*role != "user" && *role != "assistant"))
        throw bad_request(p + ".role: must be 'user' or 'assistant'", p + ".role");
    const bool user = *role == "user";
    const ordered_json& content = field(m, "content", p);
    if (content.is_string()) {
        out.push_back({{"role", *role}, {"content", content}});
        return;
    }
    if (!content.is_array()) throw bad_request(p + ".content: must be a string or an array of content blocks", p + ".content");
    std::string text;
    ordered_json calls = ordered_json::array();
    bool had_results = false;
    for (size_t j = 0; j < content.size(); ++j) {
        const std::string b = p + ".content." + std::to_string(j);
        const ordered_json& block = content[j];
        const std::string type = block_type(block, b, user);
        if (type == "text") {
            text += string_field(block, "text", b);
        } else if (type == "tool_use") {
            const ordered_json& input = field(block, "input", b);
            if (!input.is_object()) throw bad_request(b + ".input: Input should be an object", b + ".input");
            calls.push_back({{"id", string_field(block, "id", b)},
                             {"type", "function"},
                             {"function", {{"name", string_field(block, "name", b)}, {"arguments", input}}}});
        } else {
            auto c = block.find("content");
            const std::string result = c == block.end() || c->is_null() ? "" : text_of(*c, b + ".content");
            out.push_back({{"role", "tool"}, {"tool_call_id", string_field(block, "tool_use_id", b)}, {"content", result}});
            had_results = true;
        }
    }
    if (user) {
        if (!text.empty() || !had_results) out.push_back({{"role", "user"}, {"content", text}});
        return;
    }
    ordered_json msg = {{"role", "assistant"}, {"content", text}};
    if (!calls.empty()) msg["tool_calls"] = std::move(calls);
    out.push_back(std::move(msg));
}

}  // namespace

AnthropicPrompt read_anthropic_prompt(const ApiState& api, const ordered_json& body) {
    AnthropicPrompt r;
    r.messages = ordered_json::array();
    if (auto sys = body.find("system"); sys != body.end() && !sys->is_null())
        r.messages.push_back({{"role", "system"}, {"content", text_of(*sys, "system")}});
    auto messages = body.find("messages");
    if (messages == body.end() || !messages->is_array()) throw bad_request("messages: Field required (an array)", "messages");
    if (messages->empty()) throw bad_request("messages: at least one message is required", "messages");
    for (size_t i = 0; i < messages->size(); ++i) add_message((*messages)[i], "messages." + std::to_string(i), r.messages);
    r.tools = tools::read_anthropic_tools(body, api);

    ChatPromptOptions options;
    // A final assistant message is a prefill: the reply continues it.
    r.prefill = r.messages.back()["role"] == "assistant";
    options.continue_final_message = r.prefill;
    options.add_generation_prompt = !r.prefill;
    options.tools = r.tools.template_tools.is_null() ? nullptr : &r.tools.template_tools;
    r.tokens = chat_prompt_tokens(api, r.messages, options);
    return r;
}

}  // namespace radiance::frontend
