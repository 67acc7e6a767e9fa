// POST /v1/completions: OpenAI text completions (prompt as text, token ids or a batch of them;
// echo; logprobs; return_token_ids), streamed as text_completion chunks ending with [DONE] or
// answered once. Choice index = prompt index * n + sample index, as OpenAI numbers them.
#include "api_error.h"
#include "completion_prompt.h"
#include "finish_reasons.h"
#include "generation_job.h"
#include "openai_logprobs.h"
#include "openai_shapes.h"
#include "route_handlers.h"
#include "sampling_fields.h"
#include "structured_output.h"
#include "wire_output.h"

namespace radiance::frontend {

namespace {

// What the answer needs besides the results; shared by the listener (the plan goes to the job).
struct CompletionShape {
    std::vector<PromptInput> prompts;
    bool stream = false;
    bool include_usage = false;
    bool echo = false;
    bool return_token_ids = false;
    int logprobs = -1;  // -1: none; k: the chosen token and k alternatives
    size_t n = 1;

    const PromptInput& prompt_of(size_t choice) const { return prompts[choice / n]; }
    size_t choices() const { return prompts.size() * n; }
    int prompt_tokens() const {
        int t = 0;
        for (const auto& p : prompts) t += static_cast<int>(p.ids.size());
        return t;
    }
};

struct CompletionRequest {
    std::shared_ptr<CompletionShape> shape = std::make_shared<CompletionShape>();
    JobPlan plan;
};

CompletionRequest read_completion_request(const ApiState& api, const ordered_json& body) {
    CompletionRequest req;
    CompletionShape& r = *req.shape;
    r.prompts = read_completion_prompts(api, body);
    r.stream = get_bool(body, "stream").value_or(false);
    r.include_usage = openai_include_usage(body);
    r.echo = get_bool(body, "echo").value_or(false);
    r.return_token_ids = get_bool(body, "return_token_ids").value_or(false);
    if (auto s = get_string(body, "suffix"); s && !s->empty()) throw bad_request("'suffix' is not supported", "suffix");
    r.n = static_cast<size_t>(get_int(body, "n", 1, api.ctx().options.max_n).value_or(1));
    if (auto best_of = get_int(body, "best_of", 1, api.ctx().options.max_n); best_of && static_cast<size_t>(*best_of) != r.n)
        throw bad_request("'best_of' other than n is not supported", "best_of");
    if (r.n * r.prompts.size() > static_cast<size_t>(api.ctx().options.max_n))
        throw bad_request("n times the number of prompts is over " + std::to_string(api.ctx().options.max_n), "n");
    if (auto lp = get_int(body, "logprobs", 0, api.ctx().options.max_top_logprobs)) r.logprobs = static_cast<int>(*lp);
    if (r.echo && r.logprobs >= 0) throw bad_request("'echo' with 'logprobs' is not supported (no prompt logprobs)", "echo");

    SamplingParams sampling = read_openai_sampling(body, api);
    sampling.top_logprobs = r.logprobs;
    req.plan = api.new_plan(body, "stop");
    req.plan.cache_salt = openai_cache_salt(body);
    const auto requested = get_int(body, "max_tokens", INT32_MIN, INT32_MAX);
    const auto constraint = read_openai_constraint(body, api);  // structured_outputs, response_format (as vLLM)
    for (const auto& p : r.prompts) {
        const int max_tokens = api.plan_max_tokens(p.ids.size(), requested, "prompt", "max_tokens", false);
        for (size_t i = 0; i < r.n; ++i) {
            ChoicePlan c{p.ids, sampling, max_tokens, constraint};
            c.sampling.seed = seed_for_choice(sampling.seed, i);
            req.plan.choices.push_back(std::move(c));
        }
    }
    return req;
}

class CompletionStream : public JobListener {
public:
    CompletionStream(std::shared_ptr<StreamWriter> w, std::shared_ptr<const CompletionShape> r, std::string model)
        : writer_(std::move(w)), r_(*r), keep_(std::move(r)), model_(std::move(model)), offsets_(r_.choices(), 0) {}

    // Echoed prompts and prompt ids go first, one chunk per choice.
    void start() {
        if (!r_.echo && !r_.return_token_ids) return;
        for (size_t i = 0; i < offsets_.size(); ++i) {
            const PromptInput& p = r_.prompt_of(i);
            ordered_json c = choice(i, r_.echo ? p.text : "", ordered_json(), nullptr);
            if (r_.echo) offsets_[i] = code_points(p.text);
            if (r_.return_token_ids) c["prompt_token_ids"] = p.ids;
            write_chunk(std::move(c));
        }
    }

    void on_delta(size_t i, const ChoiceDelta& d) override {
        if (d.text.empty() && r_.logprobs < 0 && !r_.return_token_ids) return;
        ordered_json c = choice(i, d.text, r_.logprobs >= 0 ? completion_logprobs(d.tokens, offsets_[i]) : ordered_json(), nullptr);
        if (r_.return_token_ids) c["token_ids"] = token_ids_json(d.tokens);
        write_chunk(std::move(c));
    }

    void on_choice_end(size_t i, const ChoiceResult& r) override {
        if (r.end == ChoiceEnd::Error || r.end == ChoiceEnd::Cancelled) return;
        write_chunk(choice(i, "", ordered_json(), openai_finish_reason(r.end)));
    }

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) {
            writer_->write(sse_data(openai_stream_error(*e)));
        } else if (r_.include_usage) {
            ordered_json chunk = base();
            chunk["choices"] = ordered_json::array();
            chunk["usage"] = openai_usage(r_.prompt_tokens(), total_completion_tokens(results));
            writer_->write(sse_data(chunk));
        }
        writer_->write(std::string(kSseDone));
        writer_->close();
    }

private:
    ordered_json base() const { return {{"id", id_}, {"object", "text_completion"}, {"created", created_}, {"model", model_}}; }
    static ordered_json choice(size_t i, const std::string& text, ordered_json logprobs, const char* finish) {
        return {{"index", i},
                {"text", text},
                {"logprobs", std::move(logprobs)},
                {"finish_reason", finish ? ordered_json(finish) : ordered_json()}};
    }
    void write_chunk(ordered_json c) {
        ordered_json chunk = base();
        chunk["choices"] = ordered_json::array({std::move(c)});
        if (r_.include_usage) chunk["usage"] = nullptr;
        writer_->write(sse_data(chunk));
    }

    std::shared_ptr<StreamWriter> writer_;
    const CompletionShape& r_;
    std::shared_ptr<const CompletionShape> keep_;
    std::string id_ = new_request_id("cmpl-");
    int64_t created_ = unix_time();
    std::string model_;
    std::vector<size_t> offsets_;  // text_offset per choice
};

class CompletionAnswer : public JobListener {
public:
    CompletionAnswer(std::shared_ptr<StreamWriter> w, Request head, std::shared_ptr<const CompletionShape> r, std::string model)
        : writer_(std::move(w)), head_(std::move(head)), r_(*r), keep_(std::move(r)), model_(std::move(model)) {}

    void on_job_end(const std::vector<ChoiceResult>& results) override {
        if (auto e = failed_choice(results)) return writer_->respond(openai_error(head_, *e));
        ordered_json choices = ordered_json::array();
        for (size_t i = 0; i < results.size(); ++i) {
            const auto& res = results[i];
            const PromptInput& p = r_.prompt_of(i);
            size_t offset = r_.echo ? code_points(p.text) : 0;
            ordered_json c = {{"index", i},
                              {"text", r_.echo ? p.text + res.text : res.text},
                              {"logprobs", r_.logprobs >= 0 ? completion_logprobs(res.tokens, offset) : ordered_json()},
                              {"finish_reason", openai_finish_reason(res.end)}};
            if (r_.return_token_ids) {
                c["prompt_token_ids"] = p.ids;
                c["token_ids"] = token_ids_json(res.tokens);
            }
            choices.push_back(std::move(c));
        }
        ordered_json out = {{"id", new_request_id("cmpl-")}, {"object", "text_completion"},
                            {"created", unix_time()},        {"model", model_},
                            {"choices", std::move(choices)}, {"usage", openai_usage(r_.prompt_tokens(), total_completion_tokens(results))}};
        if (r_.return_token_ids && r_.prompts.size() == 1) out["prompt_token_ids"] = r_.prompts[0].ids;
        respond_json(*writer_, head_, http::status::ok, out);
    }

private:
    std::shared_ptr<StreamWriter> writer_;
    Request head_;
    const CompletionShape& r_;
    std::shared_ptr<const CompletionShape> keep_;
    std::string model_;
};

}  // namespace

Reply handle_completions(const ApiState& api, const Request& req) {
    return answer_errors(req, ErrorShape::OpenAI, [&]() -> Reply {
        const ordered_json body = parse_body(req.body());
        api.check_model(body);
        CompletionRequest r = read_completion_request(api, body);
        auto writer = std::make_shared<StreamWriter>();
        if (r.shape->stream) {
            auto listener = std::make_shared<CompletionStream>(writer, r.shape, api.model_name());
            listener->start();
            return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, true);
        }
        auto listener = std::make_shared<CompletionAnswer>(writer, request_head(req), r.shape, api.model_name());
        return reply_with_job(api.service(), api.tokenizer(), std::move(r.plan), listener, writer, req, false);
    });
}

}  // namespace radiance::frontend
