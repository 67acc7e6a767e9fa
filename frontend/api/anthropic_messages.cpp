// POST /v1/messages: Anthropic's Messages API (text, tool_use and tool_result blocks). Streams
// the events the official SDKs expect (message_start, content_block_start, ping,
// content_block_delta..., content_block_stop, message_delta, message_stop) or answers one message
// object; errors come in Anthropic's shape. POST /v1/messages/count_tokens counts a request's
// prompt as /v1/messages would build it.
#include <optional>

#include "anthropic_prompt.h"
#include "api_error.h"
#include "finish_reasons.h"
#include "generation_job.h"
#include "route_handlers.h"
#include "sampling_fields.h"
#include "tool_calls/anthropic_tool_wire.h"
#include "wire_output.h"

namespace radiance::frontend {

namespace {

struct MessagesRequest {
    JobPlan plan;
    bool stream = false;
    int prompt_tokens = 0;
    const tools::ToolCallParser* parser = nullptr;  // reads tool_use blocks out of the text; null: text only
    bool constrained = false;                       // tool_choice any or tool: a grammar writes the calls
};

MessagesRequest read_messages_request(const ApiState& api, const ordered_json& body) {
    MessagesRequest r;
    const auto max_tokens = get_int(body, "max_tokens", INT32_MIN, INT32_MAX);
    if (!max_tokens) throw bad_request("max_tokens: Field required", "max_tokens");
    AnthropicPrompt prompt = read_anthropic_prompt(api, body);
    r.prompt_tokens = static_cast<int>(prompt.tokens.size());
    // SDKs send generous max_tokens by default: cap it to what fits rather than refuse.
    const int max = api.plan_max_tokens(prompt.tokens.size(), max_tokens, "messages", "max_tokens", true);
    r.stream = get_bool(body, "stream").value_or(false);
    r.plan = api.new_plan(body, "stop_sequences");
    r.parser = prompt.tools.plan.parser;
    r.constrained = prompt.tools.plan.grammar != nullptr;
    if (r.parser && r.parser->needs_special_tokens()) r.plan.skip_special_tokens = false;
    r.plan.choices.push_back({std::move(prompt.tokens), read_anthropic_sampling(body), max, prompt.tools.plan.grammar});
    return r;
}

std::string new_tool_use_id() { return new_request_id("toolu_"); }

const char* stop_reason(ChoiceEnd end, bool called) {
    return called && end != ChoiceEnd::Aborted ? "tool_use" : anthropic_stop_reason(end);
}

ordered_json stop_sequence(const ChoiceResult& r) { return r.end == ChoiceEnd::StopString ? ordered_json(r.stop_string) : ordered_json(); }

class MessagesStream : public JobListener {
public:
    MessagesStream(std::shared_ptr<StreamWriter> w, std::string model, const MessagesRequest& r)
        : writer_(std::move(w)),
          model_(std::move(model)),
          prompt_tokens_(r.prompt_tokens),
          blocks_([w = writer_](std::string_view event, const ordered_json& data) { w->write(sse_event(event, data)); }) {
        if (r.parser) calls_.emplace(*r.parser, new_tool_use_id, r.constrained);
    }

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
        // Without tools the text block opens at once, as Anthropic's API does; with them the first
        // delta decides whether it is text or a tool_use.
        if (!calls_) blocks_.open_text();
        writer_->write(sse_event("ping", {{"type", "ping"}}));
    }

    void on_delta(size_t, const ChoiceDelta& d) override {
        if (d.text.empty()) return;
        blocks_.add(calls_ ? calls_->push(d.text) : tools::ToolDelta{d.text, {}});
    }

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) {
            writer_->write(
                sse_event("error", {{"type", "error"}, {"error", {{"type", anthropic_error_type(e->status)}, {"message", e->what()}}}}));
            return writer_->close();
        }
        const ChoiceResult& r = results[0];
        if (calls_) blocks_.add(calls_->finish());
        blocks_.finish();
        writer_->write(sse_event(
            "message_delta",
            {{"type", "message_delta"},
             {"delta", {{"stop_reason", stop_reason(r.end, calls_ && calls_->calls_shown() > 0)}, {"stop_sequence", stop_sequence(r)}}},
             {"usage", {{"output_tokens", r.completion_tokens}}}}));
        writer_->write(sse_event("message_stop", {{"type", "message_stop"}}));
        writer_->close();
    }

private:
    std::shared_ptr<StreamWriter> writer_;
    std::string id_ = new_request_id("msg_");
    std::string model_;
    int prompt_tokens_;
    std::optional<tools::ToolCallStream> calls_;  // with tools
    tools::AnthropicBlocks blocks_;
};

class MessagesAnswer : public JobListener {
public:
    MessagesAnswer(std::shared_ptr<StreamWriter> w, Request head, std::string model, const MessagesRequest& r)
        : writer_(std::move(w)),
          head_(std::move(head)),
          model_(std::move(model)),
          prompt_tokens_(r.prompt_tokens),
          parser_(r.parser),
          constrained_(r.constrained) {}

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) return writer_->respond(anthropic_error(head_, *e));
        const ChoiceResult& r = results[0];
        tools::ToolOutput out =
            parser_ ? tools::read_tool_calls(*parser_, r.text, new_tool_use_id, constrained_) : tools::ToolOutput{r.text, {}};
        respond_json(*writer_, head_, http::status::ok,
                     {{"id", new_request_id("msg_")},
                      {"type", "message"},
                      {"role", "assistant"},
                      {"model", model_},
                      {"content", tools::anthropic_content(out)},
                      {"stop_reason", stop_reason(r.end, !out.calls.empty())},
                      {"stop_sequence", stop_sequence(r)},
                      {"usage", {{"input_tokens", prompt_tokens_}, {"output_tokens", r.completion_tokens}}}});
    }

private:
    std::shared_ptr<StreamWriter> writer_;
    Request head_;
    std::string model_;
    int prompt_tokens_;
    const tools::ToolCallParser* parser_;
    bool constrained_;
};

}  // namespace

Reply handle_messages(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::Anthropic, [&]() -> Reply {
        const ordered_json body = parse_body(req.body());
        api.check_model(body);
        MessagesRequest r = read_messages_request(api, body);
        auto writer = std::make_shared<StreamWriter>();
        if (r.stream) {
            auto listener = std::make_shared<MessagesStream>(writer, api.model_name(), r);
            listener->start();
            return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, true);
        }
        auto listener = std::make_shared<MessagesAnswer>(writer, request_head(req), api.model_name(), r);
        return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, false);
    });
}

Reply handle_count_tokens(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::Anthropic, [&]() -> Reply {
        const ordered_json body = parse_body(req.body());
        api.check_model(body);
        const AnthropicPrompt prompt = read_anthropic_prompt(api, body);
        return json_response(req, http::status::ok, dump_json(ordered_json{{"input_tokens", prompt.tokens.size()}}));
    });
}

}  // namespace radiance::frontend
