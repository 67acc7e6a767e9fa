#include "scheduler.h"

#include <algorithm>
#include <random>

#include "scheduler_request.h"

#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

namespace {

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

ModelInfo Scheduler::model_info() const { return {opts_.model_name, max_ctx_.load(), plan_.vocab, opts_.hidden_size}; }

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
            {"steps_abandoned", s.steps_abandoned},
            {"overlapped_steps", s.overlapped_steps},
            {"lost_with_two_in_flight", s.lost_with_two_in_flight}};
}

uint64_t Scheduler::submit(GenerationRequest req, std::shared_ptr<GenerationSink> sink) {
    if (!started_) throw NotReady("the model is not loaded yet");
    if (draining_) throw NotReady("the server is shutting down");
    if (req.embed) return submit_embedding(std::move(req), std::move(sink));
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
    return enqueue(std::move(req), std::move(sink));
}

// An embedding request: prefill only, so the prompt alone must fit the context and the cache.
uint64_t Scheduler::submit_embedding(GenerationRequest req, std::shared_ptr<GenerationSink> sink) {
    if (opts_.hidden_size <= 0) throw BadRequest("this server was started without embeddings (--embeddings or --task embed)", "model");
    if (plan_.hidden_width != opts_.hidden_size)
        throw BadRequest(plan_.hidden_width == 0 ? "the workers cannot return hidden rows: the model's architecture declares no pooled "
                                                   "output (rad_declare_pooled)"
                                                 : "the workers' hidden rows are " + std::to_string(plan_.hidden_width) +
                                                       " wide, not the model's " + std::to_string(opts_.hidden_size),
                         "model");
    if (req.prompt.empty()) throw BadRequest("the input is empty", "input");
    for (int32_t t : req.prompt)
        if (t < 0 || t >= plan_.vocab) throw BadRequest("token id " + std::to_string(t) + " is outside the vocabulary", "input");
    const int max_ctx = max_ctx_.load();
    if (static_cast<int64_t>(req.prompt.size()) > max_ctx)
        throw BadRequest("the input has " + std::to_string(req.prompt.size()) + " tokens; the context holds " + std::to_string(max_ctx),
                         "input");
    const int64_t blocks_needed = (static_cast<int64_t>(req.prompt.size()) + plan_.kv_block_size - 1) / plan_.kv_block_size;
    if (blocks_needed > plan_.kv_blocks)
        throw BadRequest("the input (" + std::to_string(req.prompt.size()) + " tokens) needs " + std::to_string(blocks_needed) +
                             " KV cache blocks; the cache holds " + std::to_string(plan_.kv_blocks),
                         "input");
    req.max_tokens = 0;
    req.constraint = nullptr;
    return enqueue(std::move(req), std::move(sink));
}

uint64_t Scheduler::enqueue(GenerationRequest req, std::shared_ptr<GenerationSink> sink) {
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
    if (it == requests_.end() || it->second->zombie) return;  // a zombie has ended already
    it->second->cancelled = true;
    it->second->cancel_why = why;
    cv_.notify_all();
}

size_t Scheduler::abort_all() {
    std::lock_guard<std::mutex> lk(mu_);
    size_t n = 0;
    for (auto& [id, r] : requests_) {
        if (r->cancelled || r->zombie) continue;  // already on its way out, for its own reason
        r->cancelled = true;
        r->cancel_why = FinishReason::Aborted;
        ++n;
    }
    cv_.notify_all();
    return n;
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
    // a mean pools every row of the prompt: none may come from the cache
    if (!opts_.prefix_caching || r.req.embed == Pooling::Mean) return;
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
    r.pool_sum.clear();  // recomputed with the KV
    r.pooled_rows = 0;
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
    done.push_back(finished(r.sink, why, error));
    if (r.in_flight > 0) {
        // An outstanding step still writes its KV: the blocks wait for its answer (bury).
        r.zombie = true;
        running_.erase(std::remove(running_.begin(), running_.end(), &r), running_.end());
        waiting_.erase(std::remove(waiting_.begin(), waiting_.end(), &r), waiting_.end());
        return;
    }
    retire(r);
    requests_.erase(r.id);  // r is gone
}

void Scheduler::bury(Request& r) {
    retire(r);
    requests_.erase(r.id);  // r is gone
}

void Scheduler::requeue_all(const std::string& why) {
    // Whatever was outstanding is lost: zombies are done with, the others start over.
    for (auto it = requests_.begin(); it != requests_.end();) {
        Request& r = *it->second;
        ++it;  // bury() erases r
        r.in_flight = 0;
        r.queued = 0;
        r.pending = 0;
        if (r.zombie) bury(r);
    }
    // Oldest first at the front of the queue, ahead of new arrivals.
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
        Request* r = *it;
        drop_kv(*r);
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

}  // namespace radiance::frontend
