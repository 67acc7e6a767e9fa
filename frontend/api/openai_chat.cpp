// POST /v1/chat/completions: OpenAI chat completions, streamed as chat.completion.chunk events
// ending with [DONE], or answered once.
#include "api_error.h"
#include "chat_prompt.h"
#include "finish_reasons.h"
#include "generation_job.h"
#include "openai_logprobs.h"
#include "openai_shapes.h"
#include "route_handlers.h"
#include "sampling_fields.h"
#include "structured_output.h"
#include "tool_calls/openai_tool_wire.h"
#include "tool_calls/tool_choice.h"
#include "wire_output.h"

namespace radiance::frontend {

namespace {

struct ChatRequest {
    ordered_json messages;
    JobPlan plan;
    bool stream = false;
    bool include_usage = false;
    bool logprobs = false;
    int prompt_tokens = 0;
    tools::ToolPlan tools;  // parser null: the output is text
};

// The finish reason of a choice whose calls were read out of its text.
const char* chat_finish_reason(ChoiceEnd end, bool called) {
    return called && end != ChoiceEnd::Aborted ? "tool_calls" : openai_finish_reason(end);
}

ChatRequest read_chat_request(const ApiState& api, const ordered_json& body) {
    ChatRequest r;
    auto messages = body.find("messages");
    if (messages == body.end() || messages->is_null()) throw bad_request("'messages' is required", "messages");
    r.messages = normalize_chat_messages(*messages);

    r.stream = get_bool(body, "stream").value_or(false);
    r.include_usage = openai_include_usage(body);
    const int n = static_cast<int>(get_int(body, "n", 1, api.ctx().options.max_n).value_or(1));
    r.logprobs = get_bool(body, "logprobs").value_or(false);
    const auto top = get_int(body, "top_logprobs", 0, api.ctx().options.max_top_logprobs);
    if (top && !r.logprobs) throw bad_request("'top_logprobs' needs 'logprobs': true", "top_logprobs");

    SamplingParams sampling = read_openai_sampling(body, api);
    sampling.top_logprobs = r.logprobs ? static_cast<int>(top.value_or(0)) : -1;
    r.plan = api.new_plan(body, "stop");
    r.plan.cache_salt = openai_cache_salt(body);

    // tools reach the template whatever tool_choice says (vLLM's default, none included).
    r.tools = tools::read_openai_tools(body, api);
    if (r.tools.parser && r.tools.parser->needs_special_tokens()) r.plan.skip_special_tokens = false;
    auto tool_list = body.find("tools");
    auto kwargs = body.find("chat_template_kwargs");
    ChatPromptOptions prompt_options;
    prompt_options.tools = tool_list != body.end() ? &*tool_list : nullptr;
    prompt_options.template_kwargs = kwargs != body.end() && !kwargs->is_null() ? &*kwargs : nullptr;
    prompt_options.add_generation_prompt = get_bool(body, "add_generation_prompt").value_or(true);
    prompt_options.continue_final_message = get_bool(body, "continue_final_message").value_or(false);
    std::vector<int32_t> prompt = chat_prompt_tokens(api, r.messages, prompt_options);
    r.prompt_tokens = static_cast<int>(prompt.size());

    // max_completion_tokens is the newer name; either may come.
    const char* max_name =
        body.contains("max_completion_tokens") && !body["max_completion_tokens"].is_null() ? "max_completion_tokens" : "max_tokens";
    const int max_tokens = api.plan_max_tokens(prompt.size(), get_int(body, max_name, INT32_MIN, INT32_MAX), "messages", max_name, false);

    auto constraint = read_openai_constraint(body, api);  // response_format, structured_outputs
    if (r.tools.grammar) {
        if (constraint)
            throw bad_request(
                "tool_choice 'required' or a named function constrains the output itself; it cannot be combined with "
                "response_format or structured outputs",
                "tool_choice");
        constraint = r.tools.grammar;
    }
    for (int i = 0; i < n; ++i) {
        ChoicePlan c{prompt, sampling, max_tokens, constraint};
        c.sampling.seed = seed_for_choice(sampling.seed, static_cast<size_t>(i));
        r.plan.choices.push_back(std::move(c));
    }
    return r;
}

// Streams chat.completion.chunk events: a role chunk per choice, content deltas, a finish chunk
// per choice, the usage chunk when asked, then [DONE].
class ChatStream : public JobListener {
public:
    ChatStream(std::shared_ptr<StreamWriter> w, const ChatRequest& r, std::string model)
        : writer_(std::move(w)),
          model_(std::move(model)),
          include_usage_(r.include_usage),
          logprobs_(r.logprobs),
          prompt_tokens_(r.prompt_tokens),
          parser_(r.tools.parser),
          constrained_(r.tools.grammar != nullptr) {}

    void start(size_t n) {
        for (size_t i = 0; i < n; ++i) {
            write_chunk(ordered_json::array({choice(i, {{"role", "assistant"}, {"content", ""}}, nullptr, nullptr)}));
            if (parser_)
                calls_.emplace_back(
                    *parser_, [p = parser_] { return p->new_call_id(); }, constrained_);
        }
    }

    void on_delta(size_t i, const ChoiceDelta& d) override {
        if (parser_) return write_tool_delta(i, calls_[i].push(d.text), d.tokens);
        if (d.text.empty() && !logprobs_) return;
        write_chunk(ordered_json::array({choice(i, {{"content", d.text}}, logprobs_ ? chat_logprobs(d.tokens) : ordered_json(), nullptr)}));
    }

    void on_choice_end(size_t i, const ChoiceResult& r) override {
        if (r.end == ChoiceEnd::Error || r.end == ChoiceEnd::Cancelled) return;
        bool called = false;
        if (parser_) {
            write_tool_delta(i, calls_[i].finish(), {});
            called = calls_[i].calls_shown() > 0;
        }
        write_chunk(ordered_json::array({choice(i, ordered_json::object(), nullptr, chat_finish_reason(r.end, called))}));
    }

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) {
            writer_->write(sse_data(openai_stream_error(*e)));
        } else if (include_usage_) {
            ordered_json chunk = base();
            chunk["choices"] = ordered_json::array();
            chunk["usage"] = openai_usage(prompt_tokens_, total_completion_tokens(results));
            writer_->write(sse_data(chunk));
        }
        writer_->write(std::string(kSseDone));
        writer_->close();
    }

private:
    // Content and tool-call deltas of what the parser let through (with the tokens' logprobs).
    void write_tool_delta(size_t i, const tools::ToolDelta& td, const std::vector<ShownToken>& tokens) {
        const bool lp = logprobs_ && !tokens.empty();
        if (td.empty() && !lp) return;
        ordered_json delta = ordered_json::object();
        if (!td.content.empty() || td.calls.empty()) delta["content"] = td.content;
        if (!td.calls.empty()) delta["tool_calls"] = tools::openai_tool_call_deltas(td.calls);
        write_chunk(ordered_json::array({choice(i, std::move(delta), lp ? chat_logprobs(tokens) : ordered_json(), nullptr)}));
    }
    ordered_json base() const { return {{"id", id_}, {"object", "chat.completion.chunk"}, {"created", created_}, {"model", model_}}; }
    static ordered_json choice(size_t i, ordered_json delta, ordered_json logprobs, const char* finish) {
        return {{"index", i},
                {"delta", std::move(delta)},
                {"logprobs", std::move(logprobs)},
                {"finish_reason", finish ? ordered_json(finish) : ordered_json()}};
    }
    // choices: an array (ordered_json::array({...}): a one-element braced list is an array to gcc
    // and a copy of the element to clang).
    void write_chunk(ordered_json choices) {
        ordered_json chunk = base();
        chunk["choices"] = std::move(choices);
        if (include_usage_) chunk["usage"] = nullptr;  // as OpenAI: every chunk but the last has usage null
        writer_->write(sse_data(chunk));
    }

    std::shared_ptr<StreamWriter> writer_;
    std::string id_ = new_request_id("chatcmpl-");
    int64_t created_ = unix_time();
    std::string model_;
    bool include_usage_, logprobs_;
    int prompt_tokens_;
    const tools::ToolCallParser* parser_;
    bool constrained_;
    std::vector<tools::ToolCallStream> calls_;  // per choice, with a parser
};

// Collects the choices and answers one chat.completion object.
class ChatAnswer : public JobListener {
public:
    ChatAnswer(std::shared_ptr<StreamWriter> w, Request head, const ChatRequest& r, std::string model)
        : writer_(std::move(w)),
          head_(std::move(head)),
          model_(std::move(model)),
          logprobs_(r.logprobs),
          prompt_tokens_(r.prompt_tokens),
          parser_(r.tools.parser),
          constrained_(r.tools.grammar != nullptr) {}

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) return writer_->respond(openai_error(head_, *e));
        ordered_json choices = ordered_json::array();
        for (size_t i = 0; i < results.size(); ++i) {
            const auto& r = results[i];
            ordered_json message = {{"role", "assistant"}, {"content", r.text}};
            bool called = false;
            if (parser_) {
                tools::ToolOutput out = tools::read_tool_calls(
                    *parser_, r.text, [p = parser_] { return p->new_call_id(); }, constrained_);
                called = !out.calls.empty();
                if (called) {
                    message["content"] = out.content.empty() ? ordered_json() : ordered_json(out.content);
                    message["tool_calls"] = tools::openai_tool_calls(out.calls);
                }
            }
            choices.push_back({{"index", i},
                               {"message", std::move(message)},
                               {"logprobs", logprobs_ ? chat_logprobs(r.tokens) : ordered_json()},
                               {"finish_reason", chat_finish_reason(r.end, called)}});
        }
        respond_json(*writer_, head_, http::status::ok,
                     {{"id", new_request_id("chatcmpl-")},
                      {"object", "chat.completion"},
                      {"created", unix_time()},
                      {"model", model_},
                      {"choices", std::move(choices)},
                      {"usage", openai_usage(prompt_tokens_, total_completion_tokens(results))}});
    }

private:
    std::shared_ptr<StreamWriter> writer_;
    Request head_;
    std::string model_;
    bool logprobs_;
    int prompt_tokens_;
    const tools::ToolCallParser* parser_;
    bool constrained_;
};

}  // namespace

Reply handle_chat_completions(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        const ordered_json body = parse_body(req.body());
        api.check_model(body);
        ChatRequest r = read_chat_request(api, body);
        auto writer = std::make_shared<StreamWriter>();
        const size_t n = r.plan.choices.size();
        if (r.stream) {
            auto listener = std::make_shared<ChatStream>(writer, r, api.model_name());
            listener->start(n);
            return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, true);
        }
        auto listener = std::make_shared<ChatAnswer>(writer, request_head(req), r, api.model_name());
        return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, false);
    });
}

}  // namespace radiance::frontend
