#include "generation_job.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <span>

#include "api_error.h"
#include "radiance/text/stream_decoder.h"
#include "stop_matcher.h"
#include "structured_output.h"
#include "wire_output.h"

namespace radiance::frontend {

namespace {

class Job : public std::enable_shared_from_this<Job> {
public:
    Job(GenerationService& service, const text::Tokenizer& tokenizer, JobPlan plan, std::shared_ptr<JobListener> listener)
        : service_(service), tokenizer_(tokenizer), plan_(std::move(plan)), listener_(std::move(listener)) {
        std::sort(plan_.stop_token_ids.begin(), plan_.stop_token_ids.end());
        for (const auto& c : plan_.choices) {
            choices_.push_back(std::make_unique<Choice>(tokenizer, plan_.skip_special_tokens, plan_.stop, c.prompt));
            choices_.back()->logprobs = c.sampling.top_logprobs >= 0;
            results_.emplace_back().prompt_tokens = static_cast<int>(c.prompt.size());
        }
    }

    void submit_all();
    void cancel_all();
    void on_tokens(size_t i, const std::vector<TokenEvent>& tokens);
    void on_finish(size_t i, FinishReason reason, const std::string& error);

private:
    struct Choice {
        Choice(const text::Tokenizer& t, bool skip_special, std::vector<std::string> stops, std::span<const int32_t> prompt)
            : decoder(t, skip_special, prompt), stop(std::move(stops)) {}
        text::StreamDecoder decoder;  // generated text continues the prompt's
        StopMatcher stop;
        bool logprobs = false;                              // the wire shows tokens' pieces: their bytes are worth finding
        std::optional<uint64_t> id;                         // known once submit() returned
        bool cancel_wanted = false;                         // asked to cancel before the id was known
        FinishReason cancel_why = FinishReason::Cancelled;  // Stop after a stop string
        bool ended_here = false;                            // a stop token or stop string ended it; ignore what follows
        bool finished = false;                              // on_finish came
    };

    bool is_stop_token(int32_t t) const { return std::binary_search(plan_.stop_token_ids.begin(), plan_.stop_token_ids.end(), t); }
    // Asks the service to stop choice i once its id is known. Returns the id to cancel now
    // (outside the lock: a service may finish the request inside cancel()).
    std::optional<uint64_t> want_cancel(Choice& c, FinishReason why = FinishReason::Cancelled) {
        if (c.finished) return std::nullopt;
        c.cancel_why = why;
        if (!c.id) c.cancel_wanted = true;
        return c.id;
    }
    // Releases what the detokenizer and the stop matcher still hold at the end of a choice.
    void flush(size_t i);
    void emit(size_t i, const ChoiceDelta& d) {
        if (!abandoned_ && (!d.text.empty() || !d.tokens.empty())) listener_->on_delta(i, d);
    }

    // The token as the wire shows it; advances the choice's decoder. Bytes and alternatives only
    // when the choice shows logprobs (ev.top is empty otherwise).
    ShownToken show(Choice& c, const TokenEvent& ev) {
        ShownToken t{ev, {}, {}};
        auto bytes = [&](int32_t id) { return c.logprobs ? tokenizer_.token_bytes(id, plan_.skip_special_tokens) : std::string(); };
        for (const TokenLogprob& alt : ev.top) t.top.push_back({c.decoder.peek(alt.token), bytes(alt.token)});
        t.piece = {c.decoder.step(ev.token), bytes(ev.token)};
        return t;
    }

    GenerationService& service_;
    text::Tokenizer tokenizer_;
    JobPlan plan_;
    std::shared_ptr<JobListener> listener_;
    std::mutex mu_;
    std::vector<std::unique_ptr<Choice>> choices_;
    std::vector<ChoiceResult> results_;
    size_t finished_ = 0;
    bool abandoned_ = false;  // submission failed: the request is answered with an error instead
};

class ChoiceSink : public GenerationSink {
public:
    ChoiceSink(std::shared_ptr<Job> job, size_t index) : job_(std::move(job)), index_(index) {}
    void on_tokens(const std::vector<TokenEvent>& tokens) override { job_->on_tokens(index_, tokens); }
    void on_finish(FinishReason reason, const std::string& error) override { job_->on_finish(index_, reason, error); }

private:
    std::shared_ptr<Job> job_;
    size_t index_;
};

void Job::submit_all() {
    for (size_t i = 0; i < plan_.choices.size(); ++i) {
        GenerationRequest req;
        req.prompt = plan_.choices[i].prompt;
        req.sampling = plan_.choices[i].sampling;
        req.max_tokens = plan_.choices[i].max_tokens;
        req.stop_token_ids = plan_.stop_token_ids;
        req.deadline = plan_.deadline;
        req.cache_salt = plan_.cache_salt;
        if (plan_.choices[i].grammar) req.constraint = make_constraint(plan_.choices[i].grammar, plan_.stop_token_ids);
        uint64_t id = 0;
        try {
            id = service_.submit(std::move(req), std::make_shared<ChoiceSink>(shared_from_this(), i));
        } catch (...) {
            std::vector<uint64_t> submitted;
            {
                std::lock_guard lk(mu_);
                abandoned_ = true;
                for (auto& c : choices_)
                    if (c->id && !c->finished) submitted.push_back(*c->id);
            }
            for (uint64_t s : submitted) service_.cancel(s);
            rethrow_service_error(std::current_exception());
        }
        bool cancel_now;
        FinishReason why;
        {
            std::lock_guard lk(mu_);
            choices_[i]->id = id;
            cancel_now = choices_[i]->cancel_wanted && !choices_[i]->finished;
            why = choices_[i]->cancel_why;
        }
        if (cancel_now) service_.cancel(id, why);
    }
}

void Job::cancel_all() {
    std::vector<uint64_t> ids;
    {
        std::lock_guard lk(mu_);
        for (auto& c : choices_)
            if (auto id = want_cancel(*c)) ids.push_back(*id);
    }
    for (uint64_t id : ids) service_.cancel(id);
}

void Job::on_tokens(size_t i, const std::vector<TokenEvent>& tokens) {
    std::optional<uint64_t> to_cancel;
    {
        std::lock_guard lk(mu_);
        Choice& c = *choices_[i];
        ChoiceResult& r = results_[i];
        if (c.finished || c.ended_here) return;  // tokens already in flight when we stopped it
        ChoiceDelta d;
        for (const TokenEvent& ev : tokens) {
            ++r.completion_tokens;
            if (is_stop_token(ev.token)) {
                c.ended_here = true;
                r.end = ChoiceEnd::StopToken;
                break;
            }
            d.tokens.push_back(show(c, ev));
            StopMatcher::Step step = c.stop.push(d.tokens.back().piece.text);
            d.text += step.text;
            if (step.matched) {
                c.ended_here = true;
                r.end = ChoiceEnd::StopString;
                r.stop_string = c.stop.stops()[*step.matched];
                to_cancel = want_cancel(c, FinishReason::Stop);
                break;
            }
        }
        r.text += d.text;
        r.tokens.insert(r.tokens.end(), d.tokens.begin(), d.tokens.end());
        emit(i, d);
    }
    if (to_cancel) service_.cancel(*to_cancel, FinishReason::Stop);  // a stop string: finished, not aborted
}

void Job::flush(size_t i) {
    Choice& c = *choices_[i];
    ChoiceResult& r = results_[i];
    ChoiceDelta d;
    StopMatcher::Step step = c.stop.push(c.decoder.flush());
    d.text = step.text;
    if (step.matched) {
        r.end = ChoiceEnd::StopString;
        r.stop_string = c.stop.stops()[*step.matched];
    } else {
        d.text += c.stop.finish();
    }
    r.text += d.text;
    emit(i, d);
}

void Job::on_finish(size_t i, FinishReason reason, const std::string& error) {
    std::lock_guard lk(mu_);
    Choice& c = *choices_[i];
    ChoiceResult& r = results_[i];
    if (c.finished) return;
    c.finished = true;
    ++finished_;
    if (!c.ended_here) {
        switch (reason) {
        case FinishReason::Length: r.end = ChoiceEnd::Length; break;
        case FinishReason::Stop: r.end = ChoiceEnd::StopToken; break;
        case FinishReason::Cancelled: r.end = ChoiceEnd::Cancelled; break;
        case FinishReason::Aborted: r.end = ChoiceEnd::Aborted; break;
        case FinishReason::Error:
            r.end = ChoiceEnd::Error;
            r.error = error.empty() ? "generation failed" : error;
            break;
        }
    }
    if (r.end == ChoiceEnd::Length || r.end == ChoiceEnd::StopToken || r.end == ChoiceEnd::Aborted) flush(i);
    if (abandoned_) return;
    listener_->on_choice_end(i, r);
    if (finished_ == choices_.size()) listener_->on_job_end(results_);
}

}  // namespace

void start_job(GenerationService& service, const text::Tokenizer& tokenizer, JobPlan plan, std::shared_ptr<JobListener> listener,
               const std::shared_ptr<StreamWriter>& writer) {
    if (plan.choices.empty()) throw bad_request("nothing to generate");
    auto job = std::make_shared<Job>(service, tokenizer, std::move(plan), std::move(listener));
    // Weak: the writer must not keep a finished job alive (the job's listener holds the writer).
    std::weak_ptr<Job> weak = job;
    writer->on_client_gone([weak] {
        if (auto j = weak.lock()) j->cancel_all();
    });
    job->submit_all();
}

Reply reply_with_job(GenerationService& service, const text::Tokenizer& tokenizer, JobPlan plan, std::shared_ptr<JobListener> listener,
                     const std::shared_ptr<StreamWriter>& writer, const Request& req, bool stream) {
    start_job(service, tokenizer, std::move(plan), std::move(listener), writer);
    return stream ? Reply::stream(sse_head(req), writer) : Reply::deferred(writer);
}

}  // namespace radiance::frontend
