#include "scheduler.h"

#include <algorithm>
#include <random>
#include <unordered_set>

#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

struct Scheduler::Request {
    uint64_t id = 0;
    GenerationRequest req;
    std::shared_ptr<GenerationSink> sink;
    uint64_t seed = 0;
    std::vector<int32_t> generated;
    std::vector<int32_t> tokens;  // the prompt, then the generated tokens: the sequence KV is computed for
    std::vector<int32_t> blocks;
    int64_t computed = 0;  // tokens whose KV the workers hold
    // Prefix caching: chain hashes of the sequence's full blocks (hash_full_blocks), how many of
    // its leading blocks are in the cache, and whether its first lookup was counted.
    std::vector<uint64_t> block_hashes;
    CachedPrefix cached;
    bool lookup_counted = false;
    bool cancelled = false;
    FinishReason cancel_why = FinishReason::Cancelled;
    bool in_step = false;
    std::chrono::steady_clock::time_point arrived, first_scheduled, last_token;
    std::map<int32_t, int32_t> gen_counts;

    int64_t len() const { return static_cast<int64_t>(tokens.size()); }
};

namespace {

// Room kept in a step for the group's communicator name (WorkerGroup fills it in).
constexpr size_t kCommNameBytes = 256;
// Steps that fail in a row, each time by a worker crashing (or hanging) during it, before the
// requests of the last one are failed instead of re-queued: a request that kills its rank every
// time must not take the service down with it. A rank killed from outside (an operator, SIGKILL)
// does not count: its requests are re-run however often that happens.
constexpr int kStepAttempts = 3;

SinkEvent finished(std::shared_ptr<GenerationSink> sink, FinishReason why, std::string error) {
    SinkEvent e;
    e.sink = std::move(sink);
    e.finish = true;
    e.why = why;
    e.error = std::move(error);
    return e;
}

ipc::SampleSpec spec_of(const GenerationRequest& q, uint64_t seed, const std::vector<int32_t>& generated,
                        const std::map<int32_t, int32_t>& counts) {
    const SamplingParams& s = q.sampling;
    ipc::SampleSpec o;
    o.params = s;
    o.params.seed = seed;
    o.draw = static_cast<int64_t>(generated.size());
    if (s.repetition_penalty != 1.0f) {  // HF applies it over prompt and generated tokens
        std::vector<int32_t> seen(q.prompt.begin(), q.prompt.end());
        seen.insert(seen.end(), generated.begin(), generated.end());
        std::sort(seen.begin(), seen.end());
        seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
        o.seen_tokens = std::move(seen);
    }
    if (s.presence_penalty != 0.0f || s.frequency_penalty != 0.0f)
        for (auto& [t, c] : counts) o.gen_counts.push_back({t, c});
    return o;
}

// Structured output: the row's mask from its constraint; false when no token is allowed.
bool constrain(GenerationRequest& q, int64_t vocab, ipc::SampleSpec& spec) {
    if (!q.constraint) return true;
    spec.allowed.assign(static_cast<size_t>((vocab + 31) / 32), 0);
    return q.constraint->allowed(spec.allowed);
}

}  // namespace

int default_batch_tokens(int max_seqs) { return std::max(256, 2 * max_seqs); }

Scheduler::Scheduler(StepTarget& group, SchedulerOptions opts, SchedulerObserver* observer)
    : group_(group), opts_(std::move(opts)), observer_(observer), max_ctx_(opts_.max_ctx) {}

Scheduler::~Scheduler() { stop(); }

void Scheduler::start() {
    plan_ = group_.plan();
    if (plan_.kv_block_size <= 0 || plan_.kv_blocks <= 0) throw Error("the workers report no KV cache to schedule");
    blocks_.reset(plan_.kv_blocks);
    joins_seen_ = group_.joins();
    stats_.kv_blocks_total = plan_.kv_blocks;
    // A context the cache cannot hold once would only be refused request by request: serve less.
    const int64_t cache_tokens = plan_.kv_blocks * plan_.kv_block_size;
    if (cache_tokens < opts_.max_ctx) {
        log::warn("context ", opts_.max_ctx, " cut to ", cache_tokens, " tokens: the KV cache holds ", plan_.kv_blocks, " blocks of ",
                  plan_.kv_block_size, " (--kv-blocks, or the memory left once the model is placed)");
        max_ctx_ = static_cast<int>(cache_tokens);
    }
    last_progress_ = std::chrono::steady_clock::now().time_since_epoch().count();
    started_ = true;
    thread_ = std::thread([this] { loop(); });
}

void Scheduler::stop() {
    stop_ = true;
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
    dispatcher_.flush();
}

bool Scheduler::ready() const { return started_ && !draining_ && group_.ready() && !stalled(); }

bool Scheduler::stalled() const {
    std::lock_guard<std::mutex> lk(mu_);
    if (requests_.empty()) return false;
    const auto since = std::chrono::steady_clock::now().time_since_epoch() - std::chrono::steady_clock::duration(last_progress_.load());
    return since > opts_.stall_timeout;
}

void Scheduler::drain() {
    draining_ = true;
    cv_.notify_all();
}

ModelInfo Scheduler::model_info() const { return {opts_.model_name, max_ctx_.load(), plan_.vocab}; }

SchedulerStats Scheduler::stats() const {
    std::lock_guard<std::mutex> lk(mu_);
    SchedulerStats s = stats_;
    s.running = static_cast<int64_t>(running_.size());
    s.waiting = static_cast<int64_t>(waiting_.size());
    s.kv_blocks_used = blocks_.held_count();
    s.kv_blocks_evictable = blocks_.evictable_count();
    return s;
}

nlohmann::json Scheduler::stats_json() const {
    SchedulerStats s = stats();
    return {{"requests_running", s.running},
            {"requests_waiting", s.waiting},
            {"kv_blocks_total", s.kv_blocks_total},
            {"kv_blocks_used", s.kv_blocks_used},
            {"kv_block_size", plan_.kv_block_size},
            {"kv_cache_usage", s.kv_blocks_total ? static_cast<double>(s.kv_blocks_used) / static_cast<double>(s.kv_blocks_total) : 0.0},
            {"kv_blocks_evictable", s.kv_blocks_evictable},
            {"prefix_caching", opts_.prefix_caching},
            {"prefix_cache_queries", s.prefix_cache_queries},
            {"prefix_cache_hits", s.prefix_cache_hits},
            {"prefix_cache_hit_rate",
             s.prefix_cache_queries ? static_cast<double>(s.prefix_cache_hits) / static_cast<double>(s.prefix_cache_queries) : 0.0},
            {"preemptions", s.preemptions},
            {"prompt_tokens", s.prompt_tokens},
            {"generated_tokens", s.generated_tokens},
            {"steps", s.steps},
            {"requeued_after_rank_loss", s.requeued_after_rank_loss},
            {"steps_abandoned", s.steps_abandoned}};
}

uint64_t Scheduler::submit(GenerationRequest req, std::shared_ptr<GenerationSink> sink) {
    if (!started_) throw NotReady("the model is not loaded yet");
    if (draining_) throw NotReady("the server is shutting down");
    if (req.prompt.empty()) throw BadRequest("the prompt is empty", "prompt");
    if (req.max_tokens < 1) throw BadRequest("max_tokens must be at least 1", "max_tokens");
    for (int32_t t : req.prompt)
        if (t < 0 || t >= plan_.vocab) throw BadRequest("token id " + std::to_string(t) + " is outside the vocabulary", "prompt");
    if (req.sampling.logit_bias.size() > kMaxLogitBias)
        throw BadRequest(
            "logit_bias has " + std::to_string(req.sampling.logit_bias.size()) + " entries; at most " + std::to_string(kMaxLogitBias),
            "logit_bias");
    for (auto& [t, bias] : req.sampling.logit_bias)
        if (t < 0 || t >= plan_.vocab)
            throw BadRequest("logit_bias token id " + std::to_string(t) + " is outside the vocabulary", "logit_bias");
    const int64_t total = static_cast<int64_t>(req.prompt.size()) + req.max_tokens;
    const int max_ctx = max_ctx_.load();
    if (static_cast<int64_t>(req.prompt.size()) >= max_ctx)
        throw BadRequest("the prompt has " + std::to_string(req.prompt.size()) + " tokens; the context holds " + std::to_string(max_ctx),
                         "prompt");
    if (total > max_ctx)
        throw BadRequest("prompt (" + std::to_string(req.prompt.size()) + " tokens) + max_tokens (" + std::to_string(req.max_tokens) +
                             ") exceeds the context of " + std::to_string(max_ctx),
                         "max_tokens");
    // The last token generated is never fed back, so total - 1 tokens of KV at most.
    const int64_t blocks_needed = (total - 1 + plan_.kv_block_size - 1) / plan_.kv_block_size;
    if (blocks_needed > plan_.kv_blocks)  // it could never run: it would wait forever
        throw BadRequest("prompt + max_tokens (" + std::to_string(total) + " tokens) needs " + std::to_string(blocks_needed) +
                             " KV cache blocks; the cache holds " + std::to_string(plan_.kv_blocks),
                         "max_tokens");
    std::lock_guard<std::mutex> lk(mu_);
    if (waiting_.size() >= opts_.max_queue) throw QueueFull("the queue holds " + std::to_string(opts_.max_queue) + " waiting requests");
    auto r = std::make_unique<Request>();
    r->id = next_id_++;
    r->seed = req.sampling.seed ? *req.sampling.seed : std::random_device{}() * 0x9E3779B97F4A7C15ull + r->id;
    r->req = std::move(req);
    r->tokens = r->req.prompt;
    r->sink = std::move(sink);
    r->arrived = std::chrono::steady_clock::now();
    waiting_.push_back(r.get());
    const uint64_t id = r->id;
    stats_.prompt_tokens += static_cast<int64_t>(r->req.prompt.size());
    requests_[id] = std::move(r);
    cv_.notify_all();
    return id;
}

void Scheduler::cancel(uint64_t id, FinishReason why) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = requests_.find(id);
    if (it == requests_.end()) return;
    it->second->cancelled = true;
    it->second->cancel_why = why;
    cv_.notify_all();
}

size_t Scheduler::abort_all() {
    std::lock_guard<std::mutex> lk(mu_);
    size_t n = 0;
    for (auto& [id, r] : requests_) {
        if (r->cancelled) continue;  // already on its way out, for its own reason
        r->cancelled = true;
        r->cancel_why = FinishReason::Aborted;
        ++n;
    }
    cv_.notify_all();
    return n;
}

void Scheduler::preempt_newest(Request* keep) {
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
        Request* v = *it;
        if (v == keep || v->in_step) continue;
        drop_kv(*v);
        running_.erase(std::next(it).base());
        waiting_.push_front(v);
        stats_.preemptions++;
        if (observer_) observer_->on_preemption();
        log::debug("preempted request ", v->id, " (recompute)");
        return;
    }
}

// Builds the next step; rows[i] is (request, samples) for each sequence in batch order. The step
// stays within what the transport carries (group_.step_capacity(), counted exactly as rows are
// added: a row's sampling spec carries its logit_bias, and its prompt for a repetition penalty); a
// row that would overflow it waits, moved to the front so it goes first next step, and a row too
// large for a step of its own is failed (too_large).
bool Scheduler::build_step(ipc::StepMessage& m, std::vector<std::pair<Request*, bool>>& rows, std::vector<Request*>& too_large,
                           std::vector<Request*>& dead_ends) {
    const int block = plan_.kv_block_size;
    int budget = opts_.max_batch_tokens;
    auto& b = m.batch;
    b.cu_seqlens = {0};
    auto blocks_for = [&](int64_t tokens) { return (tokens + block - 1) / block; };
    const size_t capacity = group_.step_capacity();
    size_t bytes = ipc::encoded_size(m) + kCommNameBytes, stride = 1;
    bool full = false;  // a row did not fit: nothing more this step
    // Adds the row if it fits; false (and `full`) if not.
    auto add = [&](Request* r, int64_t from, int64_t to) -> bool {
        const bool samples = to == r->len();
        ipc::SampleSpec spec;
        if (samples) spec = spec_of(r->req, r->seed, r->generated, r->gen_counts);
        if (samples && !constrain(r->req, plan_.vocab, spec)) {
            dead_ends.push_back(r);
            return false;
        }
        const size_t row_bytes =
            static_cast<size_t>(to - from) * ipc::kStepTokenBytes + ipc::kStepRowBytes + (samples ? ipc::encoded_size(spec) : 0);
        const size_t w = std::max(stride, r->blocks.size());
        if (bytes + row_bytes + w * (rows.size() + 1) * 4 > capacity) {
            full = true;
            if (rows.empty())
                too_large.push_back(r);
            else if (auto it = std::find(running_.begin(), running_.end(), r); it != running_.end())
                std::rotate(running_.begin(), it, it + 1);
            return false;
        }
        bytes += row_bytes;
        stride = w;
        for (int64_t i = from; i < to; ++i) {
            b.tokens.push_back(r->tokens[static_cast<size_t>(i)]);
            b.positions.push_back(static_cast<int32_t>(i));
        }
        b.cu_seqlens.push_back(static_cast<int32_t>(b.tokens.size()));
        b.seq_ids.push_back(static_cast<int32_t>(r->id & 0x7fffffff));
        if (samples) {
            b.out_ids.push_back(static_cast<int32_t>(b.tokens.size() - 1));
            m.samples.push_back(std::move(spec));
        }
        r->in_step = true;
        if (r->first_scheduled == std::chrono::steady_clock::time_point{}) r->first_scheduled = std::chrono::steady_clock::now();
        rows.push_back({r, samples});
        budget -= static_cast<int>(to - from);
        return true;
    };
    // Decode rows first: one token for every running sequence whose KV is complete.
    for (size_t i = 0; i < running_.size() && budget > 0 && !full && static_cast<int>(rows.size()) < opts_.max_seqs; ++i) {
        Request* r = running_[i];
        if (r->computed != r->len() - 1) continue;
        while (!blocks_.grow(r->blocks, blocks_for(r->len()))) {
            size_t before = running_.size();
            preempt_newest(r);
            if (running_.size() == before) break;
        }
        if (static_cast<int64_t>(r->blocks.size()) < blocks_for(r->len())) continue;  // waits for blocks
        add(r, r->len() - 1, r->len());
    }
    b.n_seq_decode = static_cast<int32_t>(rows.size());
    // Then prefill chunks: running sequences mid-prefill, then new arrivals in order.
    auto prefill = [&](Request* r) -> bool {
        if (budget <= 0 || full || static_cast<int>(rows.size()) >= opts_.max_seqs) return false;
        const int64_t chunk = std::min<int64_t>(r->len() - r->computed, budget);
        if (chunk <= 0) return true;
        if (!blocks_.grow(r->blocks, blocks_for(r->computed + chunk))) return false;
        return add(r, r->computed, r->computed + chunk);
    };
    for (size_t i = 0; i < running_.size(); ++i)
        if (Request* r = running_[i]; !r->in_step && r->computed < r->len() - 1) prefill(r);
    // Full blocks running requests are prefilling and have not published yet (built when first
    // asked): a waiting request whose next uncached block is one of them waits for it.
    std::unordered_set<uint64_t> in_flight;
    bool in_flight_known = false;
    auto note_in_flight = [&](const Request& r) {
        for (size_t k = static_cast<size_t>(r.cached.blocks); k < r.block_hashes.size(); ++k) in_flight.insert(r.block_hashes[k]);
    };
    auto next_block_in_flight = [&](const Request& r) {
        if (!opts_.prefix_caching || r.cached.blocks >= (r.len() - 1) / block) return false;
        if (!in_flight_known) {
            for (const Request* q : running_)
                if (q->computed < q->len() - 1) note_in_flight(*q);
            in_flight_known = true;
        }
        return in_flight.count(r.block_hashes[static_cast<size_t>(r.cached.blocks)]) > 0;
    };
    // Waiting requests in order, each starting from the longest run of cached blocks it begins
    // with; one waiting for an in-flight block is passed over (it holds nothing meanwhile).
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        Request* r = *it;
        if (budget <= 0 || full || static_cast<int>(rows.size()) >= opts_.max_seqs) break;
        share_cached_prefix(*r);
        if (next_block_in_flight(*r)) {
            drop_kv(*r);
            ++it;
            continue;
        }
        if (!prefill(r)) {  // one too large stays queued: the caller fails it (retire takes it off)
            drop_kv(*r);
            break;
        }
        if (opts_.prefix_caching && !r->lookup_counted) {
            r->lookup_counted = true;
            stats_.prefix_cache_queries += r->len();
            stats_.prefix_cache_hits += r->computed;
            if (observer_) observer_->on_prefix_cache(r->len(), r->computed);
        }
        if (in_flight_known) note_in_flight(*r);
        it = waiting_.erase(it);
        running_.push_back(r);
    }
    if (rows.empty()) return false;
    // Block tables: one row per sequence, as wide as the widest (`stride`, kept by add()).
    b.block_table_stride = static_cast<int32_t>(stride);
    for (auto& [r, s] : rows) {
        for (size_t k = 0; k < stride; ++k) b.block_tables.push_back(k < r->blocks.size() ? r->blocks[k] : r->blocks[0]);
    }
    return true;
}

void Scheduler::hash_full_blocks(Request& r) {
    const int block = plan_.kv_block_size;
    const std::span<const int32_t> seq(r.tokens);
    for (size_t k = r.block_hashes.size(); k < seq.size() / static_cast<size_t>(block); ++k) {
        const uint64_t parent = k ? r.block_hashes.back() : 0;
        r.block_hashes.push_back(blocks_.hash(parent, seq.subspan(k * block, block), k ? "" : r.req.cache_salt));
    }
}

void Scheduler::share_cached_prefix(Request& r) {
    if (!opts_.prefix_caching) return;
    hash_full_blocks(r);
    // The last token is always computed, for its logits: the run stops short of the block holding it.
    const int block = plan_.kv_block_size;
    blocks_.share_cached(r.blocks, r.cached, r.tokens, r.block_hashes, r.req.cache_salt, (r.len() - 1) / block, block);
    r.computed = r.cached.blocks * block;
}

void Scheduler::publish_computed(Request& r) {
    const int block = plan_.kv_block_size;
    if (!opts_.prefix_caching || r.computed / block <= r.cached.blocks) return;
    hash_full_blocks(r);
    blocks_.publish(r.blocks, r.cached, r.tokens, r.block_hashes, r.req.cache_salt, r.computed / block, block);
}

void Scheduler::drop_kv(Request& r) {
    blocks_.release(r.blocks);
    r.computed = 0;
    r.cached = {};
}

void Scheduler::retire(Request& r) {
    blocks_.release(r.blocks);
    running_.erase(std::remove(running_.begin(), running_.end(), &r), running_.end());
    waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), &r), waiting_.end());
}

void Scheduler::finish(Request& r, FinishReason why, const std::string& error, std::vector<SinkEvent>& done,
                       std::chrono::steady_clock::time_point now) {
    if (observer_)
        observer_->on_finish(why, std::chrono::duration<double>(now - r.arrived).count(), static_cast<int64_t>(r.req.prompt.size()),
                             static_cast<int64_t>(r.generated.size()));
    retire(r);
    done.push_back(finished(r.sink, why, error));
    requests_.erase(r.id);  // r is gone
}

void Scheduler::requeue_all(const std::string& why) {
    // Oldest first at the front of the queue, ahead of new arrivals.
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
        Request* r = *it;
        drop_kv(*r);
        r->in_step = false;
        waiting_.push_front(r);
        stats_.requeued_after_rank_loss++;
    }
    if (!running_.empty()) log::warn("re-queued ", running_.size(), " running request(s) for recompute: ", why);
    running_.clear();
    // The KV behind every cached block may be gone with the rank.
    blocks_.forget_cached();
}

// The last step was lost with a rank; the group is whole again. If a worker crashed during it,
// that is one more failure in a row for its requests; at kStepAttempts they are failed (5xx).
void Scheduler::settle_lost_step(std::vector<SinkEvent>& done, std::chrono::steady_clock::time_point now) {
    if (group_.crashes() > crashes_at_step_ && ++failed_in_a_row_ >= kStepAttempts) {
        const std::string why = "the step failed " + std::to_string(failed_in_a_row_) +
                                " times in a row, a worker crashing each time (last: " + suspect_failure_ + ")";
        log::error("step failed: ", why);
        for (uint64_t id : suspects_) {
            auto it = requests_.find(id);
            if (it == requests_.end()) continue;
            finish(*it->second, FinishReason::Error, why, done, now);
        }
        failed_in_a_row_ = 0;
        stats_.steps_abandoned++;
    }
    suspects_.clear();
}

void Scheduler::loop() {
    // Sinks hear from the dispatcher's thread: tokens first, then the finishes of the same step.
    std::vector<SinkEvent> done;
    std::vector<SinkEvent> emitted;
    while (!stop_) {
        ipc::StepMessage m;
        std::vector<std::pair<Request*, bool>> rows;
        uint64_t joins_at_step = 0;
        {
            std::unique_lock<std::mutex> lk(mu_);
            // Cancellations and deadlines first: their blocks are free for this step.
            const auto now = std::chrono::steady_clock::now();
            for (auto it = requests_.begin(); it != requests_.end();) {
                Request& r = *it->second;
                ++it;  // finish() erases r
                if (r.cancelled)
                    finish(r, r.cancel_why, "", done, now);
                else if (now > r.req.deadline)
                    finish(r, FinishReason::Error, "the request's deadline passed", done, now);
            }
            std::vector<Request*> too_large, dead_ends;
            if (group_.ready() && !suspects_.empty()) settle_lost_step(done, now);
            if (const uint64_t joins = group_.joins(); joins != joins_seen_) {
                // A rank came back between steps (while idle): what it held is gone.
                requeue_all("a rank joined again with an empty KV cache");
                joins_seen_ = joins;
            }
            joins_at_step = joins_seen_;
            if (!group_.ready()) {
                requeue_all("a rank is down");
            } else if (build_step(m, rows, too_large, dead_ends)) {
                stats_.steps++;
            }
            for (Request* r : dead_ends) {
                // A constraint no token of the vocabulary can continue: end it rather than wait.
                if (r->in_step) continue;  // it made this step after all (a row of its own could not)
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
            if (requests_.empty()) last_progress_ = std::chrono::steady_clock::now().time_since_epoch().count();
            if (rows.empty() && done.empty()) {
                cv_.wait_for(lk, std::chrono::milliseconds(group_.ready() ? 200 : 50));
                continue;
            }
        }
        dispatcher_.post(done);
        if (rows.empty()) continue;

        ipc::ResultMessage res;
        std::string failure;
        bool lost = false;
        const auto step_start = std::chrono::steady_clock::now();
        crashes_at_step_ = group_.crashes();
        try {
            res = group_.step(m);
            // A step that ran on a rank which joined after the step was built read KV it never had.
            if (group_.joins() != joins_at_step) throw RankLost(-1, "a rank joined again during the step (its KV cache is empty)");
            if (observer_)
                observer_->on_step(std::chrono::duration<double>(std::chrono::steady_clock::now() - step_start).count(),
                                   static_cast<int>(m.batch.tokens.size()), static_cast<int>(rows.size()));
        } catch (const RankLost& e) {
            lost = true;
            failure = e.what();
        } catch (const std::exception& e) {
            failure = e.what();
        }
        if (!failure.empty() && observer_) observer_->on_step_failure(lost);
        {
            std::lock_guard<std::mutex> lk(mu_);
            for (auto& [r, s] : rows) r->in_step = false;
            if (failure.empty()) failed_in_a_row_ = 0;
            if (lost) {
                // Whether a worker crashed is known once the group has reaped it: decided when
                // the group is whole again (settle_lost_step).
                suspects_.clear();
                for (auto& [r, s] : rows) suspects_.push_back(r->id);
                suspect_failure_ = failure;
                requeue_all(failure);
            } else if (!failure.empty()) {
                // A step that fails on a healthy group, or keeps failing, fails its requests, not
                // the server.
                log::error("step failed: ", failure);
                const auto now = std::chrono::steady_clock::now();
                for (auto& [r, s] : rows) finish(*r, FinishReason::Error, failure, done, now);
            } else {
                size_t out = 0;
                for (size_t k = 0; k < rows.size(); ++k) {
                    Request* r = rows[k].first;
                    const int64_t n = m.batch.cu_seqlens[k + 1] - m.batch.cu_seqlens[k];
                    r->computed += n;
                    publish_computed(*r);
                    if (!rows[k].second) continue;
                    const ipc::Sampled& t = res.tokens.at(out++);
                    if (r->cancelled) continue;
                    r->generated.push_back(t.token);
                    r->tokens.push_back(t.token);
                    r->gen_counts[t.token]++;
                    const auto now = std::chrono::steady_clock::now();
                    using secs = std::chrono::duration<double>;
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
                    ev.token = t.token;
                    ev.logprob = t.logprob;
                    ev.top = t.top;
                    const auto& stops = r->req.stop_token_ids;
                    FinishReason why;
                    bool end = false;
                    const bool stop_token = std::find(stops.begin(), stops.end(), t.token) != stops.end();
                    if (stop_token)
                        why = FinishReason::Stop, end = true;
                    else if (r->req.constraint && !r->req.constraint->accept(t.token))
                        // never, as the token came through the constraint's own mask
                        why = FinishReason::Error, end = true;
                    else if (r->req.constraint && r->req.constraint->complete())
                        why = FinishReason::Stop, end = true;  // the structured output is whole: nothing may follow
                    else if (static_cast<int>(r->generated.size()) >= r->req.max_tokens || r->len() >= max_ctx_.load())
                        why = FinishReason::Length, end = true;
                    if (end) finish(*r, why, why == FinishReason::Error ? "the output constraint refused a sampled token" : "", done, now);
                }
            }
        }
        for (SinkEvent& f : done) emitted.push_back(std::move(f));
        done.clear();
        dispatcher_.post(emitted);
        if (lost) {
            // Wait for the group to be whole again before building the next step.
            std::unique_lock<std::mutex> lk(mu_);
            cv_.wait_for(lk, std::chrono::milliseconds(50));
        }
    }
}

}  // namespace radiance::frontend
