#include "responses_items.h"

#include <set>

#include "api_error.h"

namespace radiance::frontend {

namespace {

std::string string_field(const ordered_json& item, const char* name, const std::string& p, bool required = true) {
    auto v = item.find(name);
    if (v == item.end() || v->is_null()) {
        if (!required) return "";
        throw bad_request("'" + p + "." + name + "' is required", p + "." + name);
    }
    if (!v->is_string()) throw bad_request("'" + p + "." + name + "' must be a string", p + "." + name);
    return v->get<std::string>();
}

// A message's content: a string, or text parts. Only text: images and files have no way into a
// text model, and silently dropping them would answer a different question.
void check_content(const ordered_json& content, const std::string& p) {
    if (content.is_string()) return;
    if (!content.is_array()) throw bad_request("'" + p + "' must be a string or an array of input_text parts", p);
    for (size_t j = 0; j < content.size(); ++j) {
        const auto& part = content[j];
        const std::string pp = p + "[" + std::to_string(j) + "]";
        if (!part.is_object()) throw bad_request("'" + pp + "' must be an object", pp);
        const std::string type = string_field(part, "type", pp);
        if (type != "input_text" && type != "output_text")
            throw bad_request(
                "'" + pp + ".type' must be \"input_text\" or \"output_text\": only text content is supported, not \"" + type + "\"",
                pp + ".type");
        string_field(part, "text", pp);
    }
}

std::string content_text(const ordered_json& content) {
    if (content.is_string()) return content.get<std::string>();
    std::string text;
    for (size_t j = 0; j < content.size(); ++j) {
        if (j > 0) text += '\n';
        text += content[j]["text"].get_ref<const std::string&>();
    }
    return text;
}

void check_message(const ordered_json& item, const std::string& p) {
    static const std::set<std::string> kRoles = {"user", "assistant", "system", "developer"};
    const std::string role = string_field(item, "role", p);
    if (!kRoles.count(role))
        throw bad_request("'" + p + ".role' must be user, assistant, system or developer, not \"" + role + "\"", p + ".role");
    auto content = item.find("content");
    if (content == item.end() || content->is_null()) throw bad_request("'" + p + ".content' is required", p + ".content");
    check_content(*content, p + ".content");
}

}  // namespace

ordered_json responses_input_items(const ordered_json& input) {
    if (input.is_string()) return ordered_json::array({{{"type", "message"}, {"role", "user"}, {"content", input}}});
    if (!input.is_array()) throw bad_request("'input' must be a string or an array of items", "input");
    if (input.empty()) throw bad_request("'input' must not be empty", "input");
    ordered_json items = ordered_json::array();
    for (size_t i = 0; i < input.size(); ++i) {
        const std::string p = "input[" + std::to_string(i) + "]";
        const auto& item = input[i];
        if (!item.is_object()) throw bad_request("'" + p + "' must be an object", p);
        // EasyInputMessage has no type: a role makes it a message.
        const std::string type = item.contains("type") ? string_field(item, "type", p) : "message";
        ordered_json out = item;
        if (type == "message") {
            check_message(item, p);
            out["type"] = "message";
        } else if (type == "function_call") {
            string_field(item, "call_id", p);
            if (string_field(item, "name", p).empty()) throw bad_request("'" + p + ".name' must not be empty", p + ".name");
            string_field(item, "arguments", p);
        } else if (type == "function_call_output") {
            string_field(item, "call_id", p);
            auto output = item.find("output");
            if (output == item.end() || output->is_null()) throw bad_request("'" + p + ".output' is required", p + ".output");
            check_content(*output, p + ".output");
        } else {
            throw bad_request("'" + p + ".type' must be \"message\", \"function_call\" or \"function_call_output\", not \"" + type + "\"",
                              p + ".type");
        }
        items.push_back(std::move(out));
    }
    return items;
}

ordered_json responses_chat_messages(const std::string& instructions, const ordered_json& items) {
    ordered_json messages = ordered_json::array();
    if (!instructions.empty()) messages.push_back({{"role", "system"}, {"content", instructions}});
    for (const auto& item : items) {
        const std::string type = item["type"].get<std::string>();
        if (type == "message") {
            std::string role = item["role"].get<std::string>();
            if (role == "developer") role = "system";
            messages.push_back({{"role", role}, {"content", content_text(item["content"])}});
        } else if (type == "function_call") {
            ordered_json call = {
                {"id", item["call_id"]}, {"type", "function"}, {"function", {{"name", item["name"]}, {"arguments", item["arguments"]}}}};
            // A turn's text and its calls, or parallel calls, are one assistant message to the template.
            if (!messages.empty() && messages.back()["role"] == "assistant") {
                ordered_json& last = messages.back();
                if (!last.contains("tool_calls")) last["tool_calls"] = ordered_json::array();
                last["tool_calls"].push_back(std::move(call));
            } else {
                messages.push_back({{"role", "assistant"}, {"content", ""}, {"tool_calls", ordered_json::array({std::move(call)})}});
            }
        } else {  // function_call_output
            messages.push_back({{"role", "tool"}, {"tool_call_id", item["call_id"]}, {"content", content_text(item["output"])}});
        }
    }
    return messages;
}

}  // namespace radiance::frontend
