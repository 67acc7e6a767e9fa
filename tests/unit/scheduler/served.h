// served.h: the scheduler tests' harness: FakeRanks with its steps logged and a started scheduler
// over it (Served), the rows a request had in those steps (StepLog), and a greedy request run to
// its end and checked against its prompt decoded alone (run).
#pragma once
#include <algorithm>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "collect_sink.h"
#include "fake_ranks.h"
#include "scheduler.h"

namespace scheduler_test {

using radiance::frontend::Scheduler;
using radiance::frontend::SchedulerOptions;

constexpr int64_t kVocab = 1000;
constexpr int kBlock = 4;

// The steps FakeRanks was sent.
struct StepLog {
    std::mutex mu;
    std::vector<radiance::ipc::StepMessage> steps;

    void record(const radiance::ipc::StepMessage& m) {
        std::lock_guard lk(mu);
        steps.push_back(m);
    }
    void attach(FakeRanks& ranks) {
        ranks.before_step = [this](const radiance::ipc::StepMessage& m) { record(m); };
    }
    // One row of a request in a step: its first position, its token count, its block table row,
    // whether it was fed from the step before, and its sampling spec when it samples.
    struct Row {
        int32_t first = 0, tokens = 0;
        std::vector<int32_t> table;
        bool fed = false;
        const radiance::ipc::SampleSpec* spec = nullptr;  // into `steps`: valid while the log is
    };
    std::vector<Row> rows_of(uint64_t id) {
        std::lock_guard lk(mu);
        std::vector<Row> out;
        for (const auto& m : steps) {
            const auto& b = m.batch;
            for (size_t s = 0; s < b.seq_ids.size(); ++s) {
                if (b.seq_ids[s] != static_cast<int32_t>(id & 0x7fffffff)) continue;
                Row r;
                r.first = b.positions[static_cast<size_t>(b.cu_seqlens[s])];
                r.tokens = b.cu_seqlens[s + 1] - b.cu_seqlens[s];
                const auto row = b.block_tables.begin() + static_cast<std::ptrdiff_t>(s * static_cast<size_t>(b.block_table_stride));
                r.table.assign(row, row + b.block_table_stride);
                r.fed = s < m.fed_from.size();  // fed rows are the first, one token each
                const auto last = b.cu_seqlens[s + 1] - 1;
                for (size_t o = 0; o < b.out_ids.size() && o < m.samples.size(); ++o)
                    if (b.out_ids[o] == last) r.spec = &m.samples[o];
                out.push_back(std::move(r));
            }
        }
        return out;
    }
    // Prompt tokens computed for positions below `below`, over every step.
    int64_t computed_below(int32_t below) {
        std::lock_guard lk(mu);
        int64_t n = 0;
        for (const auto& m : steps)
            for (int32_t p : m.batch.positions) n += p < below;
        return n;
    }
};

inline std::vector<int32_t> random_tokens(std::mt19937& rng, size_t n) {
    std::vector<int32_t> v(n);
    for (auto& t : v) t = static_cast<int32_t>(rng() % kVocab);
    return v;
}

inline SchedulerOptions options(int max_ctx = 64) {
    SchedulerOptions o;
    o.max_ctx = max_ctx;
    return o;
}

// FakeRanks with `blocks` KV blocks, its steps logged, and a started scheduler over it.
struct Served {
    FakeRanks ranks;
    StepLog log;
    Scheduler s;
    explicit Served(int64_t blocks, SchedulerOptions o = options()) : ranks({kBlock, blocks, kVocab, 8}), s(ranks, std::move(o)) {
        log.attach(ranks);
        s.start();
    }
};

// KV blocks requests still hold once the steps in flight are answered (a finished request's blocks
// go back with its last step's answer): waits up to half a second for none.
inline int64_t blocks_held_after_steps(Scheduler& s) {
    for (int i = 0; i < 100 && s.stats().kv_blocks_used; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return s.stats().kv_blocks_used;
}

// Runs one greedy request to its end and checks its tokens against the prompt decoded alone.
inline uint64_t run(Scheduler& s, const std::vector<int32_t>& prompt, int max_tokens, std::string salt = "") {
    auto sink = std::make_shared<Collect>();
    GenerationRequest r = greedy(prompt, max_tokens);
    r.cache_salt = std::move(salt);
    const uint64_t id = s.submit(std::move(r), sink);
    REQUIRE(sink->wait_done());
    CHECK(sink->why == FinishReason::Length);
    CHECK(sink->tokens == FakeRanks::reference(prompt, max_tokens, kVocab));
    return id;
}

}  // namespace scheduler_test
