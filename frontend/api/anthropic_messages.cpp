// POST /v1/messages: Anthropic's Messages API. Text content only. Streams the events the
// official SDKs expect (message_start, content_block_start, ping, content_block_delta...,
// content_block_stop, message_delta, message_stop) or answers one message object; errors come in
// Anthropic's shape.
#include "api_error.h"
#include "chat_prompt.h"
#include "finish_reasons.h"
#include "generation_job.h"
#include "route_handlers.h"
#include "sampling_fields.h"
#include "wire_output.h"

namespace radiance::frontend {

namespace {

// Text blocks ([{"type": "text", "text": ...}]) or a string, as one string.
std::string text_of(const ordered_json& content, const std::string& param) {
    if (content.is_string()) return content.get<std::string>();
    if (!content.is_array()) throw bad_request(param + ": must be a string or an array of content blocks", param);
    std::string text;
    for (size_t j = 0; j < content.size(); ++j) {
        const auto& block = content[j];
        const std::string p = param + "." + std::to_string(j);
        if (!block.is_object()) throw bad_request(p + ": must be a content block object", p);
        auto type = block.find("type");
        if (type == block.end() || !type->is_string()) throw bad_request(p + ".type: Field required", p + ".type");
        if (*type != "text")
            throw bad_request(p + ".type: only text blocks are supported, not '" + type->get<std::string>() + "'", p + ".type");
        auto t = block.find("text");
        if (t == block.end() || !t->is_string()) throw bad_request(p + ".text: must be a string", p + ".text");
        text += t->get_ref<const std::string&>();
    }
    return text;
}

// Anthropic's system + messages as chat-template messages.
ordered_json chat_messages(const ordered_json& body) {
    ordered_json out = ordered_json::array();
    if (auto sys = body.find("system"); sys != body.end() && !sys->is_null())
        out.push_back({{"role", "system"}, {"content", text_of(*sys, "system")}});
    auto messages = body.find("messages");
    if (messages == body.end() || !messages->is_array()) throw bad_request("messages: Field required (an array)", "messages");
    if (messages->empty()) throw bad_request("messages: at least one message is required", "messages");
    for (size_t i = 0; i < messages->size(); ++i) {
        const auto& m = (*messages)[i];
        const std::string p = "messages." + std::to_string(i);
        if (!m.is_object()) throw bad_request(p + ": must be an object", p);
        auto role = m.find("role");
        if (role == m.end() || !role->is_string() || (*role != "user" && *role != "assistant"))
            throw bad_request(p + ".role: must be 'user' or 'assistant'", p + ".role");
        auto content = m.find("content");
        if (content == m.end()) throw bad_request(p + ".content: Field required", p + ".content");
        out.push_back({{"role", *role}, {"content", text_of(*content, p + ".content")}});
    }
    return out;
}

struct MessagesRequest {
    JobPlan plan;
    bool stream = false;
    int prompt_tokens = 0;
};

MessagesRequest read_messages_request(const ApiState& api, const ordered_json& body) {
    MessagesRequest r;
    const auto max_tokens = get_int(body, "max_tokens", INT32_MIN, INT32_MAX);
    if (!max_tokens) throw bad_request("max_tokens: Field required", "max_tokens");
    ChatPromptOptions options;
    // A final assistant message is a prefill: the reply continues it.
    const ordered_json messages = chat_messages(body);
    options.continue_final_message = messages.back()["role"] == "assistant";
    options.add_generation_prompt = !options.continue_final_message;
    std::vector<int32_t> prompt = chat_prompt_tokens(api, messages, options);
    r.prompt_tokens = static_cast<int>(prompt.size());
    // SDKs send generous max_tokens by default: cap it to what fits rather than refuse.
    const int max = api.plan_max_tokens(prompt.size(), max_tokens, "messages", "max_tokens", true);
    r.stream = get_bool(body, "stream").value_or(false);
    r.plan = api.new_plan(body, "stop_sequences");
    r.plan.choices.push_back({std::move(prompt), read_anthropic_sampling(body), max});
    return r;
}

ordered_json stop_sequence(const ChoiceResult& r) { return r.end == ChoiceEnd::StopString ? ordered_json(r.stop_string) : ordered_json(); }

class MessagesStream : public JobListener {
public:
    MessagesStream(std::shared_ptr<StreamWriter> w, std::string model, int prompt_tokens)
        : writer_(std::move(w)), model_(std::move(model)), prompt_tokens_(prompt_tokens) {}

    void start() {
        writer_->write(sse_event("message_start", {{"type", "message_start"},
                                                   {"message",
                                                    {{"id", id_},
                                                     {"type", "message"},
                                                     {"role", "assistant"},
                                                     {"content", ordered_json::array()},
                                                     {"model", model_},
                                                     {"stop_reason", nullptr},
                                                     {"stop_sequence", nullptr},
                                                     {"usage", {{"input_tokens", prompt_tokens_}, {"output_tokens", 0}}}}}}));
        writer_->write(sse_event("content_block_start",
                                 {{"type", "content_block_start"}, {"index", 0}, {"content_block", {{"type", "text"}, {"text", ""}}}}));
        writer_->write(sse_event("ping", {{"type", "ping"}}));
    }

    void on_delta(size_t, const ChoiceDelta& d) override {
        if (d.text.empty()) return;
        writer_->write(sse_event("content_block_delta",
                                 {{"type", "content_block_delta"}, {"index", 0}, {"delta", {{"type", "text_delta"}, {"text", d.text}}}}));
    }

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) {
            writer_->write(
                sse_event("error", {{"type", "error"}, {"error", {{"type", anthropic_error_type(e->status)}, {"message", e->what()}}}}));
            return writer_->close();
        }
        const ChoiceResult& r = results[0];
        writer_->write(sse_event("content_block_stop", {{"type", "content_block_stop"}, {"index", 0}}));
        writer_->write(
            sse_event("message_delta", {{"type", "message_delta"},
                                        {"delta", {{"stop_reason", anthropic_stop_reason(r.end)}, {"stop_sequence", stop_sequence(r)}}},
                                        {"usage", {{"output_tokens", r.completion_tokens}}}}));
        writer_->write(sse_event("message_stop", {{"type", "message_stop"}}));
        writer_->close();
    }

private:
    std::shared_ptr<StreamWriter> writer_;
    std::string id_ = new_request_id("msg_");
    std::string model_;
    int prompt_tokens_;
};

class MessagesAnswer : public JobListener {
public:
    MessagesAnswer(std::shared_ptr<StreamWriter> w, Request head, std::string model, int prompt_tokens)
        : writer_(std::move(w)), head_(std::move(head)), model_(std::move(model)), prompt_tokens_(prompt_tokens) {}

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) return writer_->respond(anthropic_error(head_, *e));
        const ChoiceResult& r = results[0];
        respond_json(*writer_, head_, http::status::ok,
                     {{"id", new_request_id("msg_")},
                      {"type", "message"},
                      {"role", "assistant"},
                      {"model", model_},
                      {"content", ordered_json::array({{{"type", "text"}, {"text", r.text}}})},
                      {"stop_reason", anthropic_stop_reason(r.end)},
                      {"stop_sequence", stop_sequence(r)},
                      {"usage", {{"input_tokens", prompt_tokens_}, {"output_tokens", r.completion_tokens}}}});
    }

private:
    std::shared_ptr<StreamWriter> writer_;
    Request head_;
    std::string model_;
    int prompt_tokens_;
};

}  // namespace

Reply handle_messages(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::Anthropic, [&]() -> Reply {
        const ordered_json body = parse_body(req.body());
        api.check_model(body);
        MessagesRequest r = read_messages_request(api, body);
        auto writer = std::make_shared<StreamWriter>();
        if (r.stream) {
            auto listener = std::make_shared<MessagesStream>(writer, api.model_name(), r.prompt_tokens);
            listener->start();
            return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, true);
        }
        auto listener = std::make_shared<MessagesAnswer>(writer, request_head(req), api.model_name(), r.prompt_tokens);
        return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, false);
    });
}

}  // namespace radiance::frontend
