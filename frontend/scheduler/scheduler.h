// scheduler.h: continuous batching over the worker group.
//
// Every step mixes decode rows (one token for each running sequence, first) with prefill chunks
// under a token budget (chunked prefill). KV blocks are allocated on demand; when they run out the
// newest running request is preempted by recompute (its blocks freed, its tokens kept, recomputed
// later), never failed. Cancelling frees a request's blocks once no step in flight holds them.
// Waiting requests are served first come, first served, from a bounded queue.
//
// Automatic prefix caching (on unless SchedulerOptions::prefix_caching is false): once a full
// block's KV is computed it is published in the block cache (block_cache.h); a request admitted
// later takes references on the longest cached run of full blocks its tokens begin with and
// prefills only the rest, at least its last token (the run stops short of a block holding it), so
// a shared block is only ever read. Blocks no request holds stay cached until grow() evicts them,
// least recently used first and before any preemption. A waiting request whose next block another
// request is computing right now waits a step or so and then shares it (n > 1, many clients with
// one system prompt) instead of computing it beside it.
//
// Overlapped (SchedulerOptions::overlap, on by default): while a step runs, the next one is built
// and sent. Rows of the running step whose tokens every rank picks alike (PlanInfo::feeds_*: on a
// card, or a one-rank host plan) continue in it at their next position, their tokens fed from the
// running step's picks on the workers (ipc::StepMessage::fed_from); rows whose tokens the host
// must see first (penalties, logprobs) sit that step out and join the one after; arrivals and
// prefill chunks join either. A row that stops in the running step (a stop token, a cancel) rides
// the next as a zombie: its client hears of the end at once, its token from the next step is
// dropped, and its blocks go back only once that step is answered. Blocks are published to the
// prefix cache only from answered steps. At most two steps are outstanding; a rank lost with two
// in flight re-queues every running request as a lost step always did, zombies retired.
//
// The front end owns the truth of every request (prompt, generated tokens, sampling state), so a
// rank that dies costs time, not data: every running request is re-queued with what it generated
// so far and recomputed once the group is ready again. A rank that joins again starts with an
// empty KV cache: the block cache is forgotten whenever the group's joins() moves, and a step
// during which it moved counts as lost.
#pragma once
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "block_allocator.h"
#include "generation.h"
#include "sink_dispatcher.h"
#include "step_target.h"

namespace radiance::frontend {

struct SchedulerOptions {
    int max_batch_tokens = 256;  // tokens in one step (the workers' max_tok)
    int max_seqs = 16;           // sequences in one step
    int max_ctx = 2048;          // prompt + generated tokens (less if the workers' KV cache holds less)
    size_t max_queue = 256;      // waiting requests before 429
    // Requests waiting or running and no step has finished for this long: /ready says not ready
    // (a scheduler making no progress is not serving, whatever the ranks say).
    std::chrono::milliseconds stall_timeout{60000};
    std::string model_name;
    bool prefix_caching = true;  // --no-enable-prefix-caching turns it off
    bool overlap = true;         // --disable-overlap-schedule turns it off: lockstep steps
    // Embeddings: the width of a hidden row the workers return (the group's result slots sized for
    // max_batch_tokens of them); 0 refuses embedding requests.
    int64_t hidden_size = 0;
};

// What the scheduler reports as it works (metrics listen here; all calls come from its thread).
class SchedulerObserver {
public:
    virtual ~SchedulerObserver() = default;
    virtual void on_step(double seconds, int tokens, int sequences) = 0;
    virtual void on_first_token(double queue_seconds, double ttft_seconds) = 0;
    virtual void on_token_gap(double seconds) = 0;
    virtual void on_finish(FinishReason why, double e2e_seconds, int64_t prompt_tokens, int64_t generated) = 0;
    virtual void on_preemption() = 0;
    // A step failed: a rank was lost during it (rank_lost) or it failed on a healthy group.
    virtual void on_step_failure(bool rank_lost) { (void)rank_lost; }
    // A request's first admission looked up its `queried` tokens in the prefix cache and found the
    // KV of `hits` of them (vLLM's counting; a re-admission after a preemption is not counted).
    virtual void on_prefix_cache(int64_t queried, int64_t hits) { (void)queried, (void)hits; }
};

struct SchedulerStats {
    int64_t running = 0, waiting = 0;
    int64_t kv_blocks_total = 0, kv_blocks_used = 0;
    int64_t kv_blocks_evictable = 0;                          // cached, held by no request
    int64_t prefix_cache_queries = 0, prefix_cache_hits = 0;  // tokens, as on_prefix_cache counts them
    int64_t preemptions = 0, prompt_tokens = 0, generated_tokens = 0, steps = 0, requeued_after_rank_loss = 0;
    int64_t steps_abandoned = 0;          // steps whose requests were failed after kStepAttempts failures in a row
    int64_t overlapped_steps = 0;         // steps sent while the step before them still ran
    int64_t lost_with_two_in_flight = 0;  // ranks lost while two steps were outstanding
};

// The step token budget when none is given: a full decode batch (one token per sequence) plus as
// much again, and at least 256, for prefill chunks. A budget of max_seqs or less lets running
// decodes take every token of a step, so new prompts are admitted only as sequences finish and a
// trickle at a time (256 clients at --max-seqs 256 waited 5.6 s for their first token).
int default_batch_tokens(int max_seqs);

class Scheduler final : public GenerationService {
public:
    Scheduler(StepTarget& group, SchedulerOptions opts, SchedulerObserver* observer = nullptr);
    ~Scheduler() override;
    // Starts the step loop; call once the group is ready (plan() known).
    void start();
    void stop();
    // Stops taking new requests (submit throws NotReady); running and waiting ones finish.
    void drain();
    bool draining() const { return draining_; }
    // Ends every request at the next step boundary as FinishReason::Aborted (a drain past its
    // timeout): each answers with what it has so far. Returns how many it ended.
    size_t abort_all();

    uint64_t submit(GenerationRequest req, std::shared_ptr<GenerationSink> sink) override;
    void cancel(uint64_t id, FinishReason why = FinishReason::Cancelled) override;
    bool ready() const override;
    ModelInfo model_info() const override;
    nlohmann::json stats_json() const override;
    SchedulerStats stats() const;

private:
    struct Request;
    struct Sent;  // a step sent and not answered yet (scheduler_request.h)
    // The step loop (scheduler_loop.cpp): build, send, receive the oldest, apply its result.
    void loop();
    uint64_t submit_embedding(GenerationRequest req, std::shared_ptr<GenerationSink> sink);
    uint64_t enqueue(GenerationRequest req, std::shared_ptr<GenerationSink> sink);  // checked: queue it
    // An embedding request's rows of an answered step: pooled into r, and r answered once its
    // whole prompt is computed.
    void apply_hidden(Request& r, const float* rows, int32_t n, int32_t width, std::vector<SinkEvent>& emitted,
                      std::vector<SinkEvent>& done);
    void send_step(ipc::StepMessage& m, Sent&& sent, std::vector<SinkEvent>& done);
    void receive_step(std::vector<SinkEvent>& emitted, std::vector<SinkEvent>& done);
    void apply_result(const Sent& s, const ipc::ResultMessage& res, std::vector<SinkEvent>& emitted, std::vector<SinkEvent>& done);
    // A step lost or discarded: its rows as if never sent (their KV from `computed` on is redone).
    void undo(const Sent& s);
    // Builds the next step (scheduler_build.cpp). With `prev` outstanding, only a step that feeds
    // some of prev's rows is built (false otherwise: the caller waits for prev's answer).
    // dead_ends: rows whose structured-output constraint allows no token (the caller fails them).
    bool build_step(ipc::StepMessage& m, Sent& sent, const Sent* prev, std::vector<Request*>& too_large, std::vector<Request*>& dead_ends);
    // Whether the next step may feed the row's token: every rank picks it alike, and nothing the
    // host derives from it (a structured-output mask) goes into the row that follows.
    bool feedable(const Request& r, const ipc::SampleSpec& spec) const;
    bool stalled() const;  // work to do and no step finished for opts_.stall_timeout
    void settle_lost_step(std::vector<SinkEvent>& done, std::chrono::steady_clock::time_point now);
    void preempt_newest(Request* keep);
    void retire(Request& r);  // frees its blocks and takes it out of the queues
    // Ends r: the observer hears of it, its sink's finish joins `done`, it is retired and erased (r
    // is gone afterwards), or, while an outstanding step holds a row of it, it becomes a zombie
    // that bury() erases once the last of those is answered.
    void finish(Request& r, FinishReason why, const std::string& error, std::vector<SinkEvent>& done,
                std::chrono::steady_clock::time_point now);
    void bury(Request& r);
    void requeue_all(const std::string& why);
    // Prefix caching: the request's chain hashes for every full block of its tokens; how many of
    // its leading blocks the cache gives it (references taken, `computed` moved past them); and
    // publishing its computed full blocks. A no-op each when prefix caching is off.
    void hash_full_blocks(Request& r);
    void share_cached_prefix(Request& r);
    void publish_computed(Request& r);
    // Drops every block a request holds and what it computed there (preemption, re-queueing, an
    // admission that did not fit).
    void drop_kv(Request& r);

    StepTarget& group_;
    SchedulerOptions opts_;
    SchedulerObserver* observer_;
    PlanInfo plan_{};
    mutable std::mutex mu_;
    std::condition_variable cv_;
    BlockAllocator blocks_;
    std::map<uint64_t, std::unique_ptr<Request>> requests_;
    std::deque<Request*> waiting_;
    std::vector<Request*> running_;  // admission order: the last is the newest
    uint64_t next_id_ = 1;
    std::atomic<bool> stop_{false}, started_{false}, draining_{false};
    // opts_.max_ctx, or what the KV cache holds when that is less (set by start(); read anywhere).
    std::atomic<int> max_ctx_{0};
    // Steps lost to a crashing worker since the last step that ran, and the last lost step's
    // requests with its failure, until settle_lost_step() decides (all guarded by mu_; crashes_at_step_
    // is the step loop's own).
    int failed_in_a_row_ = 0;
    std::vector<uint64_t> suspects_;
    std::string suspect_failure_;
    int64_t crashes_at_step_ = 0;
    // group_.joins() when the block cache was last known to match the workers (guarded by mu_).
    uint64_t joins_seen_ = 0;
    std::atomic<int64_t> last_progress_{std::chrono::steady_clock::now().time_since_epoch().count()};  // a step finished or nothing to do
    SchedulerStats stats_;
    // Steps sent and not answered, oldest first (the step loop's own), and when the last answer came.
    std::vector<Sent> sent_;  // at most two
    std::chrono::steady_clock::time_point last_answer_;
    uint64_t built_steps_ = 0;   // serial of the step being built (Request::step_serial)
    SinkDispatcher dispatcher_;  // delivers to sinks while the next step runs
    std::thread thread_;
};

}  // namespace radiance::frontend
