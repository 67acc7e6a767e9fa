// POST /completion: llama-server's native completion. Streams `data: {"content", "stop": false}`
// events and a final one with "stop": true and the summary (no [DONE]), or answers once.
#include "api_error.h"
#include "completion_prompt.h"
#include "finish_reasons.h"
#include "generation_job.h"
#include "openai_logprobs.h"
#include "route_handlers.h"
#include "sampling_fields.h"
#include "structured_output.h"
#include "wire_output.h"

namespace radiance::frontend {

namespace {

struct LlamaShape {
    PromptInput prompt;
    bool stream = false;
    bool return_tokens = false;
    bool probs = false;
    int n_predict = 0;
};

struct LlamaRequest {
    std::shared_ptr<LlamaShape> shape = std::make_shared<LlamaShape>();
    JobPlan plan;
};

LlamaRequest read_llama_request(const ApiState& api, const ordered_json& body) {
    LlamaRequest req;
    LlamaShape& r = *req.shape;
    r.prompt = read_llama_prompt(api, body);
    r.stream = get_bool(body, "stream").value_or(false);
    r.return_tokens = get_bool(body, "return_tokens").value_or(false);
    SamplingParams sampling = read_llama_sampling(body, api);
    r.probs = sampling.top_logprobs > 0;
    // n_predict -1 (the default) means "until the context is full"; like llama-server, cap rather
    // than refuse what does not fit.
    int64_t n_predict = get_int(body, "n_predict", -1, INT32_MAX).value_or(-1);
    if (n_predict == 0) throw bad_request("'n_predict' must be -1 or at least 1", "n_predict");
    if (n_predict < 0) n_predict = INT32_MAX;
    r.n_predict = api.plan_max_tokens(r.prompt.ids.size(), n_predict, "prompt", "n_predict", true);
    req.plan = api.new_plan(body, "stop");
    req.plan.choices.push_back({r.prompt.ids, sampling, r.n_predict, read_llama_constraint(body, api)});  // json_schema, grammar
    return req;
}

// The fields of the final object (streamed or not).
ordered_json summary(const LlamaShape& s, const ChoiceResult& r, const std::string& model) {
    return {{"model", model},
            {"tokens_predicted", r.completion_tokens},
            {"tokens_evaluated", s.prompt.ids.size()},
            {"stop_type", llama_stop_type(r.end)},
            {"stopping_word", r.end == ChoiceEnd::StopString ? r.stop_string : ""},
            {"truncated", false},
            {"id_slot", 0},
            {"index", 0}};
}

ordered_json llama_error_json(const ApiError& e) {
    return {{"error", {{"code", static_cast<int>(e.status)}, {"message", e.what()}, {"type", openai_error_type(e.status)}}}};
}

class LlamaStream : public JobListener {
public:
    LlamaStream(std::shared_ptr<StreamWriter> w, std::shared_ptr<const LlamaShape> s, std::string model)
        : writer_(std::move(w)), s_(*s), keep_(std::move(s)), model_(std::move(model)) {}

    void on_delta(size_t, const ChoiceDelta& d) override {
        ordered_json j = {{"content", d.text}, {"stop", false}, {"id_slot", 0}, {"index", 0}};
        if (s_.return_tokens) j["tokens"] = token_ids_json(d.tokens);
        if (s_.probs) j["completion_probabilities"] = llama_probabilities(d.tokens);
        writer_->write(sse_data(j));
    }

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) {
            writer_->write(sse_data(llama_error_json(*e)));
            return writer_->close();
        }
        ordered_json j = {{"content", ""}, {"stop", true}};
        j.update(summary(s_, results[0], model_));
        writer_->write(sse_data(j));
        writer_->close();
    }

private:
    std::shared_ptr<StreamWriter> writer_;
    const LlamaShape& s_;
    std::shared_ptr<const LlamaShape> keep_;
    std::string model_;
};

class LlamaAnswer : public JobListener {
public:
    LlamaAnswer(std::shared_ptr<StreamWriter> w, Request head, std::shared_ptr<const LlamaShape> s, std::string model)
        : writer_(std::move(w)), head_(std::move(head)), s_(*s), keep_(std::move(s)), model_(std::move(model)) {}

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) return writer_->respond(json_response(head_, e->status, dump_json(llama_error_json(*e))));
        const ChoiceResult& r = results[0];
        ordered_json j = {{"content", r.text}, {"stop", true}};
        if (s_.return_tokens) j["tokens"] = token_ids_json(r.tokens);
        if (s_.probs) j["completion_probabilities"] = llama_probabilities(r.tokens);
        j.update(summary(s_, r, model_));
        respond_json(*writer_, head_, http::status::ok, j);
    }

private:
    std::shared_ptr<StreamWriter> writer_;
    Request head_;
    const LlamaShape& s_;
    std::shared_ptr<const LlamaShape> keep_;
    std::string model_;
};

}  // namespace

Reply handle_llama_completion(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        const ordered_json body = parse_body(req.body());
        LlamaRequest r = read_llama_request(api, body);
        auto writer = std::make_shared<StreamWriter>();
        if (r.shape->stream) {
            auto listener = std::make_shared<LlamaStream>(writer, r.shape, api.model_name());
            return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, true);
        }
        auto listener = std::make_shared<LlamaAnswer>(writer, request_head(req), r.shape, api.model_name());
        return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, false);
    });
}

}  // namespace radiance::frontend
