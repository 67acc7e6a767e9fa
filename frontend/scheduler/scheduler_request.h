// scheduler_request.h: the scheduler's private records (scheduler.cpp, scheduler_build.cpp and
// scheduler_loop.cpp share them): a request as the scheduler keeps it, and a step sent and not
// answered yet.
#pragma once
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "block_cache.h"
#include "scheduler.h"

namespace radiance::frontend {

struct Scheduler::Request {
    uint64_t id = 0;
    GenerationRequest req;
    std::shared_ptr<GenerationSink> sink;
    uint64_t seed = 0;
    std::vector<int32_t> generated;
    std::vector<int32_t> tokens;  // the prompt, then the generated tokens: the sequence KV is computed for
    std::vector<int32_t> blocks;
    int64_t computed = 0;  // tokens whose KV the workers hold (from answered steps)
    // Outstanding steps (sent, not answered) holding a row of it: how many (at most two), the KV
    // rows they compute (its next row starts at computed + queued), and the tokens they sample,
    // not back yet (its length is len() + pending).
    int in_flight = 0;
    int64_t queued = 0;
    int pending = 0;
    uint64_t step_serial = 0;  // the last step built with a row of it
    // Finished (its sink told) while an outstanding step still holds a row of it: that row's token
    // is dropped and its blocks go back once the last such step is answered (Scheduler::bury).
    bool zombie = false;
    // Prefix caching: chain hashes of the sequence's full blocks (hash_full_blocks), how many of
    // its leading blocks are in the cache, and whether its first lookup was counted.
    std::vector<uint64_t> block_hashes;
    CachedPrefix cached;
    bool lookup_counted = false;
    bool cancelled = false;
    FinishReason cancel_why = FinishReason::Cancelled;
    std::chrono::steady_clock::time_point arrived, first_scheduled, last_token;
    std::map<int32_t, int32_t> gen_counts;
    // An embedding request (req.embed): its pooled hidden rows so far (the last row, or the sum of
    // every row for a mean) and how many were added; dropped with its KV (drop_kv)
    std::vector<double> pool_sum;
    int64_t pooled_rows = 0;

    int64_t len() const { return static_cast<int64_t>(tokens.size()); }
    int64_t next_pos() const { return computed + queued; }  // the first position no step has computed or is computing
};

struct Scheduler::Sent {
    struct Row {
        Request* r = nullptr;
        int32_t tokens = 0;    // KV rows it computes
        bool samples = false;  // it has an out row: a token comes back for it
        bool picked = false;   // every rank picks that token alike: the next step may feed it
        int32_t hidden = 0;    // hidden rows it asked for (an embedding request), in hidden_ids order
    };
    std::vector<Row> rows;
    uint64_t joins = 0;   // group_.joins() when built: a rank that joined since never had the KV it reads
    int64_t crashes = 0;  // group_.crashes() when sent: a crash since counts against its requests
    int tokens = 0;
    std::chrono::steady_clock::time_point sent_at;
    bool discard = false;  // a step before it failed: its rows are undone when it is answered
};

}  // namespace radiance::frontend
