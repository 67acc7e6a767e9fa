// POST /v1/responses and GET /v1/responses/{id}: OpenAI's Responses API over the chat path. The
// input items become chat messages (responses_items.h), after the stored conversation of
// previous_response_id; the answer is a response object whose output items are a message and
// function calls, or a stream of typed events (response.created ... response.completed) that
// build the same object. Answered responses are kept in the bounded store (responses_store.h).
#include <algorithm>
#include <cstdint>
#include <optional>

#include "api_error.h"
#include "chat_prompt.h"
#include "finish_reasons.h"
#include "generation_job.h"
#include "openai_shapes.h"
#include "responses_fields.h"
#include "responses_items.h"
#include "responses_output.h"
#include "responses_store.h"
#include "route_handlers.h"
#include "sampling_fields.h"
#include "wire_output.h"

namespace radiance::frontend {

namespace {

struct ResponsesRequest {
    JobPlan plan;
    bool stream = false;
    bool store = true;
    int prompt_tokens = 0;
    tools::ToolPlan tools;  // parser null: the output is text
    ordered_json items;     // the conversation: the stored one, then this input
    ordered_json response;  // the response object before generation: id, echoed fields, status in_progress
};

// The store's 404, for GET and for previous_response_id alike: it cannot tell an evicted id from
// one it never had.
ApiError unknown_response(const std::string& id, const ApiState& api, const std::string& param) {
    return ApiError(http::status::not_found,
                    "the response '" + id + "' is not stored here: it is unknown, was made with store false, or is past the " +
                        std::to_string(api.responses()->capacity()) + " most recent this server keeps (--responses-store)",
                    param, "response_not_found");
}

// The response object as OpenAI shapes it, before anything is generated. Fields the request set
// are echoed as given, others as OpenAI reports its defaults.
ordered_json initial_response(const ApiState& api, const ordered_json& body, const std::string& instructions,
                              const std::optional<std::string>& previous, bool store) {
    auto echo = [&](const char* name, ordered_json fallback) {
        auto v = body.find(name);
        return v != body.end() && !v->is_null() ? *v : fallback;
    };
    ordered_json metadata = echo("metadata", ordered_json::object());
    if (!metadata.is_object()) throw bad_request("'metadata' must be an object", "metadata");
    return {{"id", new_request_id("resp_")},
            {"object", "response"},
            {"created_at", unix_time()},
            {"status", "in_progress"},
            {"error", nullptr},
            {"incomplete_details", nullptr},
            {"instructions", instructions.empty() ? ordered_json() : ordered_json(instructions)},
            {"max_output_tokens", echo("max_output_tokens", nullptr)},
            {"model", api.model_name()},
            {"output", ordered_json::array()},
            {"parallel_tool_calls", echo("parallel_tool_calls", true)},
            {"previous_response_id", previous ? ordered_json(*previous) : ordered_json()},
            {"reasoning", nullptr},
            {"store", store},
            {"temperature", echo("temperature", 1.0)},
            {"text", echo("text", {{"format", {{"type", "text"}}}})},
            {"tool_choice", echo("tool_choice", "auto")},
            {"tools", echo("tools", ordered_json::array())},
            {"top_p", echo("top_p", 1.0)},
            {"truncation", "disabled"},
            {"usage", nullptr},
            {"user", echo("user", nullptr)},
            {"metadata", std::move(metadata)}};
}

ResponsesRequest read_responses_request(const ApiState& api, const ordered_json& body) {
    ResponsesRequest r;
    auto input = body.find("input");
    if (input == body.end() || input->is_null()) throw bad_request("'input' is required", "input");
    const ordered_json items = responses_input_items(*input);
    const std::string instructions = get_string(body, "instructions").value_or("");
    const std::optional<std::string> previous = get_string(body, "previous_response_id");
    r.items = ordered_json::array();
    if (previous) {
        auto stored = api.responses()->get(*previous);
        if (!stored) throw unknown_response(*previous, api, "previous_response_id");
        r.items = std::move(stored->items);
    }
    for (const auto& item : items) r.items.push_back(item);
    r.stream = get_bool(body, "stream").value_or(false);
    r.store = get_bool(body, "store").value_or(true);

    const SamplingParams sampling = read_openai_sampling(body, api);
    r.plan = api.new_plan(body, "stop");
    r.plan.cache_salt = openai_cache_salt(body);

    ResponsesTools tools = read_responses_tools(body, api);
    r.tools = std::move(tools.plan);
    if (r.tools.parser && r.tools.parser->needs_special_tokens()) r.plan.skip_special_tokens = false;
    ChatPromptOptions prompt_options;
    prompt_options.tools = tools.template_tools.is_null() ? nullptr : &tools.template_tools;
    const ordered_json messages = normalize_chat_messages(responses_chat_messages(instructions, r.items), "input");
    std::vector<int32_t> prompt = chat_prompt_tokens(api, messages, prompt_options, "input");
    r.prompt_tokens = static_cast<int>(prompt.size());
    const int max_tokens =
        api.plan_max_tokens(prompt.size(), get_int(body, "max_output_tokens", INT32_MIN, INT32_MAX), "input", "max_output_tokens", false);

    auto constraint = read_responses_text_format(body, api);
    if (r.tools.grammar) {
        if (constraint)
            throw bad_request(
                "tool_choice 'required' or a named function constrains the output itself; it cannot be combined with text.format",
                "tool_choice");
        constraint = r.tools.grammar;
    }
    r.plan.choices.push_back(ChoicePlan{std::move(prompt), sampling, max_tokens, constraint});
    r.response = initial_response(api, body, instructions, previous, r.store);
    return r;
}

// The end of a response: "completed", or "incomplete" with a reason when max_output_tokens cut it
// (or, "abort", when the server did: vLLM's word for it).
struct Outcome {
    const char* status;
    const char* reason;  // null unless incomplete
};
Outcome outcome_of(ChoiceEnd end) {
    if (end == ChoiceEnd::Length) return {"incomplete", "max_output_tokens"};
    if (end == ChoiceEnd::Aborted) return {"incomplete", "abort"};
    return {"completed", nullptr};
}

// The response object once generation ended, and the conversation it continues stored under its id.
ordered_json finish_response(ordered_json response, Outcome o, ordered_json output, int prompt_tokens, int output_tokens) {
    response["status"] = o.status;
    response["incomplete_details"] = o.reason ? ordered_json{{"reason", o.reason}} : ordered_json();
    response["output"] = std::move(output);
    response["usage"] = {{"input_tokens", prompt_tokens},
                         {"input_tokens_details", {{"cached_tokens", 0}}},
                         {"output_tokens", output_tokens},
                         {"output_tokens_details", {{"reasoning_tokens", 0}}},
                         {"total_tokens", prompt_tokens + output_tokens}};
    return response;
}

void store_response(ResponsesStore& store, bool wanted, const ordered_json& response, ordered_json items) {
    if (!wanted) return;
    for (const auto& item : response["output"]) items.push_back(item);
    store.put(response["id"].get<std::string>(), StoredResponse{response, std::move(items)});
}

// Streams the Responses events: every one named by its type (event: and data.type) and numbered
// (sequence_number); the output items' events come from ResponseOutput.
class ResponsesStream : public JobListener {
public:
    ResponsesStream(std::shared_ptr<StreamWriter> w, const ResponsesRequest& r, std::shared_ptr<ResponsesStore> store)
        : writer_(std::move(w)),
          store_(std::move(store)),
          wanted_(r.store),
          response_(r.response),
          items_in_(r.items),
          prompt_tokens_(r.prompt_tokens),
          output_(r.tools.parser, r.tools.grammar != nullptr, [this](const char* type, ordered_json f) { emit(type, std::move(f)); }) {}

    void start() {
        emit("response.created", {{"response", response_}});
        emit("response.in_progress", {{"response", response_}});
        output_.begin();
    }

    void on_delta(size_t, const ChoiceDelta& d) override { output_.push(d.text); }

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) {
            emit("error", {{"code", openai_error_type(e->status)}, {"message", e->what()}, {"param", nullptr}});
            return writer_->close();
        }
        const Outcome o = outcome_of(results[0].end);
        output_.finish(o.status);
        const ordered_json response = finish_response(response_, o, output_.items(), prompt_tokens_, results[0].completion_tokens);
        store_response(*store_, wanted_, response, std::move(items_in_));
        emit(o.reason ? "response.incomplete" : "response.completed", {{"response", response}});
        writer_->close();
    }

private:
    void emit(const char* type, ordered_json fields) {
        ordered_json ev = {{"type", type}, {"sequence_number", seq_++}};
        for (auto it = fields.begin(); it != fields.end(); ++it) ev[it.key()] = std::move(it.value());
        writer_->write(sse_event(type, ev));
    }

    std::shared_ptr<StreamWriter> writer_;
    std::shared_ptr<ResponsesStore> store_;
    bool wanted_;
    ordered_json response_, items_in_;
    int prompt_tokens_;
    int64_t seq_ = 0;
    ResponseOutput output_;
};

// Builds the output from the whole text and answers one response object.
class ResponsesAnswer : public JobListener {
public:
    ResponsesAnswer(std::shared_ptr<StreamWriter> w, Request head, const ResponsesRequest& r, std::shared_ptr<ResponsesStore> store)
        : writer_(std::move(w)),
          head_(std::move(head)),
          store_(std::move(store)),
          wanted_(r.store),
          response_(r.response),
          items_in_(r.items),
          prompt_tokens_(r.prompt_tokens),
          parser_(r.tools.parser),
          constrained_(r.tools.grammar != nullptr) {}

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) return writer_->respond(openai_error(head_, *e));
        const ChoiceResult& r = results[0];
        const Outcome o = outcome_of(r.end);
        ResponseOutput output(parser_, constrained_);
        // Token by token, as a stream would see it: the parser places text between calls only
        // as the output grows (its content is all the text outside markup).
        size_t at = 0;
        for (const auto& t : r.tokens) {
            if (at >= r.text.size()) break;
            const size_t n = std::min(t.piece.text.size(), r.text.size() - at);
            output.push(r.text.substr(at, n));
            at += n;
        }
        if (at < r.text.size()) output.push(r.text.substr(at));
        output.finish(o.status);
        const ordered_json response = finish_response(response_, o, output.items(), prompt_tokens_, r.completion_tokens);
        store_response(*store_, wanted_, response, std::move(items_in_));
        respond_json(*writer_, head_, http::status::ok, response);
    }

private:
    std::shared_ptr<StreamWriter> writer_;
    Request head_;
    std::shared_ptr<ResponsesStore> store_;
    bool wanted_;
    ordered_json response_, items_in_;
    int prompt_tokens_;
    const tools::ToolCallParser* parser_;
    bool constrained_;
};

}  // namespace

Reply handle_responses(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        const ordered_json body = parse_body(req.body());
        api.check_model(body);
        ResponsesRequest r = read_responses_request(api, body);
        auto writer = std::make_shared<StreamWriter>();
        if (r.stream) {
            auto listener = std::make_shared<ResponsesStream>(writer, r, api.responses());
            listener->start();
            return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, true);
        }
        auto listener = std::make_shared<ResponsesAnswer>(writer, request_head(req), r, api.responses());
        return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, false);
    });
}

Reply handle_response_get(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        static constexpr std::string_view kPrefix = "/v1/responses/";
        std::string_view target(req.target().data(), req.target().size());
        target = target.substr(0, target.find('?'));
        const std::string id(target.substr(std::min(kPrefix.size(), target.size())));
        auto stored = api.responses()->get(id);
        if (!stored) throw unknown_response(id, api, "response_id");
        return json_response(req, http::status::ok, dump_json(stored->response));
    });
}

}  // namespace radiance::frontend
