// scheduler_loop.cpp: the step loop (build, send, receive the oldest, apply its result) and what a
// lost or failed step does to the requests it held.
#include <algorithm>

#include "radiance/util/log.h"
#include "scheduler.h"
#include "scheduler_request.h"

namespace radiance::frontend {

namespace {
using Clock = std::chrono::steady_clock;
using secs = std::chrono::duration<double>;
}  // namespace

// One thread runs this. Steps go out as soon as they are built: a second one while the first
// runs when it can feed rows of the first (overlap), else only once the first is answered
// (lockstep). Sinks hear from the dispatcher's thread: a step's tokens first, then the finishes
// of the same step.
void Scheduler::loop() {
    std::vector<SinkEvent> done, emitted;
    last_answer_ = Clock::now();
    const bool overlap = opts_.overlap && (plan_.feeds_greedy || plan_.feeds_sampled);
    while (!stop_) {
        ipc::StepMessage m;
        Sent s;
        bool built = false;
        {
            std::unique_lock<std::mutex> lk(mu_);
            // Cancellations and deadlines first: their blocks are free for this step (or once the
            // outstanding step that holds them is answered).
            const auto now = Clock::now();
            for (auto it = requests_.begin(); it != requests_.end();) {
                Request& r = *it->second;
                ++it;  // finish() erases r
                if (r.zombie) continue;
                if (r.cancelled)
                    finish(r, r.cancel_why, "", done, now);
                else if (now > r.req.deadline)
                    finish(r, FinishReason::Error, "the request's deadline passed", done, now);
            }
            std::vector<Request*> too_large, dead_ends;
            if (sent_.empty()) {  // an outstanding step's answer says whether a rank went meanwhile
                if (group_.ready() && !suspects_.empty()) settle_lost_step(done, now);
                if (const uint64_t joins = group_.joins(); joins != joins_seen_) {
                    // A rank came back between steps (while idle): what it held is gone.
                    requeue_all("a rank joined again with an empty KV cache");
                    joins_seen_ = joins;
                }
                if (!group_.ready()) requeue_all("a rank is down");
            }
            const bool may_build = sent_.empty() || (overlap && sent_.size() == 1 && group_.joins() == joins_seen_);
            if (group_.ready() && may_build) {
                s.joins = joins_seen_;
                built = build_step(m, s, sent_.empty() ? nullptr : &sent_.back(), too_large, dead_ends);
                if (built) stats_.steps++;
            }
            std::sort(dead_ends.begin(), dead_ends.end());  // each once: finish() may free it
            dead_ends.erase(std::unique(dead_ends.begin(), dead_ends.end()), dead_ends.end());
            for (Request* r : dead_ends) {
                // A constraint no token of the vocabulary can continue: end it rather than wait (a
                // zombie, its blocks kept, while an outstanding step still computes a chunk of it).
                if (r->zombie) continue;
                finish(*r, FinishReason::Error,
                       "the output constraint allows no token here (the grammar cannot be continued with this vocabulary)", done, now);
            }
            for (Request* r : too_large) {
                const std::string why =
                    "the request's step data (its logit_bias and penalties' token lists) exceeds what one step carries (" +
                    std::to_string(group_.step_capacity()) + " bytes)";
                log::warn("request ", r->id, ": ", why);
                finish(*r, FinishReason::Error, why, done, now);
            }
            if (requests_.empty()) last_progress_ = Clock::now().time_since_epoch().count();
            if (!built && sent_.empty() && done.empty()) {
                cv_.wait_for(lk, std::chrono::milliseconds(group_.ready() ? 200 : 50));
                continue;
            }
        }
        dispatcher_.post(done);
        if (built) send_step(m, std::move(s), done);
        if (sent_.size() == 2 || (!built && !sent_.empty())) receive_step(emitted, done);
        for (SinkEvent& f : done) emitted.push_back(std::move(f));
        done.clear();
        dispatcher_.post(emitted);
    }
}

void Scheduler::send_step(ipc::StepMessage& m, Sent&& s, std::vector<SinkEvent>& done) {
    s.crashes = group_.crashes();
    s.sent_at = Clock::now();
    std::string failure;
    bool lost = false;
    try {
        group_.send(std::move(m));
        if (!sent_.empty()) {
            std::lock_guard<std::mutex> lk(mu_);
            stats_.overlapped_steps++;
        }
        sent_.push_back(std::move(s));
        return;
    } catch (const RankLost& e) {
        lost = true;
        failure = e.what();
    } catch (const std::exception& e) {
        failure = e.what();
    }
    if (observer_) observer_->on_step_failure(lost);
    std::lock_guard<std::mutex> lk(mu_);
    if (lost) {
        // Whatever was outstanding went with the rank; the step was not (wholly) sent.
        if (!sent_.empty()) stats_.lost_with_two_in_flight++;
        suspects_.clear();
        crashes_at_step_ = sent_.empty() ? s.crashes : sent_.front().crashes;
        for (const Sent& o : sent_)
            for (const Sent::Row& row : o.rows) suspects_.push_back(row.r->id);
        for (const Sent::Row& row : s.rows) suspects_.push_back(row.r->id);
        suspect_failure_ = failure;
        sent_.clear();
        requeue_all(failure);
        return;
    }
    // Refused before any rank saw it (StepTooLarge): its requests fail, not the server.
    log::error("step failed: ", failure);
    std::vector<uint64_t> ids;
    for (const Sent::Row& row : s.rows)
        if (!row.r->zombie) ids.push_back(row.r->id);
    undo(s);
    const auto now = Clock::now();
    for (uint64_t id : ids)
        if (auto it = requests_.find(id); it != requests_.end()) finish(*it->second, FinishReason::Error, failure, done, now);
}

void Scheduler::receive_step(std::vector<SinkEvent>& emitted, std::vector<SinkEvent>& done) {
    ipc::ResultMessage res;
    std::string failure;
    bool lost = false;
    const uint64_t joins = sent_.front().joins;
    try {
        res = group_.receive();
        // A step that ran on a rank which joined after the step was built read KV it never had.
        if (group_.joins() != joins) throw RankLost(-1, "a rank joined again during the step (its KV cache is empty)");
    } catch (const RankLost& e) {
        lost = true;
        failure = e.what();
    } catch (const std::exception& e) {
        failure = e.what();
    }
    const auto now = Clock::now();
    if (failure.empty() && observer_) {
        const Sent& s = sent_.front();
        observer_->on_step(secs(now - std::max(s.sent_at, last_answer_)).count(), s.tokens, static_cast<int>(s.rows.size()));
    }
    if (!failure.empty() && observer_) observer_->on_step_failure(lost);
    last_answer_ = now;
    {
        std::lock_guard<std::mutex> lk(mu_);
        Sent s = std::move(sent_.front());
        sent_.erase(sent_.begin());
        if (failure.empty()) failed_in_a_row_ = 0;
        if (lost) {
            // This step and every later one are lost. Whether a worker crashed is known once the
            // group has reaped it: decided when the group is whole again (settle_lost_step).
            if (!sent_.empty()) stats_.lost_with_two_in_flight++;
            suspects_.clear();
            crashes_at_step_ = s.crashes;
            for (const Sent::Row& row : s.rows) suspects_.push_back(row.r->id);
            for (const Sent& later : sent_) {
                for (const Sent::Row& row : later.rows) suspects_.push_back(row.r->id);
                try {  // the group still waits for its answer when only the joins said lost
                    (void)group_.receive();
                } catch (const RankLost&) {
                    break;  // and the group forgot the rest
                } catch (const std::exception&) {
                }
            }
            suspect_failure_ = failure;
            sent_.clear();
            requeue_all(failure);
        } else if (s.discard) {
            undo(s);  // a step before it failed: whatever it did is redone
        } else if (!failure.empty()) {
            // A step that fails on a healthy group, or keeps failing, fails its requests, not the
            // server; the steps sent after it may have been fed from it: undone.
            log::error("step failed: ", failure);
            std::vector<uint64_t> ids;
            for (const Sent::Row& row : s.rows)
                if (!row.r->zombie) ids.push_back(row.r->id);
            undo(s);
            for (Sent& later : sent_) later.discard = true;
            for (uint64_t id : ids)
                if (auto it = requests_.find(id); it != requests_.end()) finish(*it->second, FinishReason::Error, failure, done, now);
        } else {
            apply_result(s, res, emitted, done);
            last_progress_ = now.time_since_epoch().count();
        }
    }
    if (lost) {
        // Wait for the group to be whole again before building the next step.
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait_for(lk, std::chrono::milliseconds(50));
    }
}

void Scheduler::apply_result(const Sent& s, const ipc::ResultMessage& res, std::vector<SinkEvent>& emitted, std::vector<SinkEvent>& done) {
    size_t out = 0, hid = 0;
    for (const Sent::Row& row : s.rows) {
        Request* r = row.r;
        r->in_flight--;
        r->queued -= row.tokens;
        r->computed += row.tokens;
        const ipc::Sampled* t = nullptr;
        if (row.samples) {
            r->pending--;
            t = &res.tokens.at(out++);
        }
        const size_t hid_at = hid;
        hid += static_cast<size_t>(row.hidden);
        if (r->zombie) {  // it ended in the step before: this row's token is dropped
            if (r->in_flight == 0) bury(*r);
            continue;
        }
        publish_computed(*r);
        if (r->req.embed && !r->cancelled) {
            const size_t w = static_cast<size_t>(std::max(res.hidden_width, 0));
            if (row.hidden && (w == 0 || res.hidden.size() < hid * w))
                finish(*r, FinishReason::Error, "the workers returned no hidden rows for an embedding request", done, Clock::now());
            else
                apply_hidden(*r, row.hidden ? res.hidden.data() + hid_at * w : nullptr, row.hidden, static_cast<int32_t>(w), emitted, done);
            continue;
        }
        if (!t || r->cancelled) continue;
        r->generated.push_back(t->token);
        r->tokens.push_back(t->token);
        r->gen_counts[t->token]++;
        const auto now = Clock::now();
        if (observer_) {
            if (r->generated.size() == 1)
                observer_->on_first_token(secs(r->first_scheduled - r->arrived).count(), secs(now - r->arrived).count());
            else
                observer_->on_token_gap(secs(now - r->last_token).count());
        }
        r->last_token = now;
        stats_.generated_tokens++;
        SinkEvent& se = emitted.emplace_back();
        se.sink = r->sink;
        TokenEvent& ev = se.tokens.emplace_back();
        ev.token = t->token;
        ev.logprob = t->logprob;
        ev.top = t->top;
        const auto& stops = r->req.stop_token_ids;
        FinishReason why;
        bool end = false;
        if (std::find(stops.begin(), stops.end(), t->token) != stops.end())
            why = FinishReason::Stop, end = true;
        else if (r->req.constraint && !r->req.constraint->accept(t->token))
            // never, as the token came through the constraint's own mask
            why = FinishReason::Error, end = true;
        else if (r->req.constraint && r->req.constraint->complete())
            why = FinishReason::Stop, end = true;  // the structured output is whole: nothing may follow
        else if (static_cast<int>(r->generated.size()) >= r->req.max_tokens || r->len() >= max_ctx_.load())
            why = FinishReason::Length, end = true;
        // a zombie while the next step holds a row of it
        if (end) finish(*r, why, why == FinishReason::Error ? "the output constraint refused a sampled token" : "", done, now);
    }
}

void Scheduler::apply_hidden(Request& r, const float* rows, int32_t n, int32_t width, std::vector<SinkEvent>& emitted,
                             std::vector<SinkEvent>& done) {
    if (n > 0) {
        // summed in double: a mean over a long prompt does not depend on how it was chunked
        // beyond the last float rounding
        r.pool_sum.resize(static_cast<size_t>(width), 0.0);
        const bool last = *r.req.embed == Pooling::Last;
        for (int32_t i = 0; i < n; ++i)
            for (int32_t j = 0; j < width; ++j) {
                const double v = rows[static_cast<size_t>(i) * width + j];
                r.pool_sum[static_cast<size_t>(j)] = last ? v : r.pool_sum[static_cast<size_t>(j)] + v;
            }
        r.pooled_rows += n;
    }
    if (r.computed < r.len()) return;  // chunks to come
    if (r.pooled_rows == 0) {
        finish(r, FinishReason::Error, "no hidden row came back for the embedding request", done, Clock::now());
        return;
    }
    const double div = *r.req.embed == Pooling::Mean ? static_cast<double>(r.pooled_rows) : 1.0;
    SinkEvent& se = emitted.emplace_back();
    se.sink = r.sink;
    se.embedding.emplace(r.pool_sum.size());
    for (size_t j = 0; j < r.pool_sum.size(); ++j) (*se.embedding)[j] = static_cast<float>(r.pool_sum[j] / div);
    finish(r, FinishReason::Stop, "", done, Clock::now());  // r is gone
}

void Scheduler::undo(const Sent& s) {
    for (const Sent::Row& row : s.rows) {
        Request* r = row.r;
        r->in_flight--;
        r->queued -= row.tokens;
        r->pending -= row.samples ? 1 : 0;
        if (r->zombie && r->in_flight == 0) bury(*r);
    }
}

}  // namespace radiance::frontend
