// The scheduler's prefix caching against FakeRanks, whose answers are a hash of the KV read back
// through each row's block table: a shared block holding anything but the tokens it stands for, a
// prefill starting at the wrong position or a block table naming the wrong block changes the
// tokens. Every test checks the tokens against a request decoded alone, and reads the steps sent.
//
// Mutations seen failing (2026-12-07): no forgetting when joins() moves between steps (the request
// never ends: every later step counts as lost) or during one ("during a step": wrong tokens);
// requeue_all() keeping the cache (both rank sections); sharing the block that holds the last
// token ("a prompt the cache holds whole" never ends); no waiting for in-flight blocks ("n
// requests at once": 120 prompt tokens computed, not 48); the salt left out of the scheduler's
// lookup ("another salt"); publish_computed() never called (every hit check); publishing up to
// len() (a crash). One survives: publishing a chunk's partly computed last block, because the
// scheduler only admits a sharer in the step that completes that block and evicts a preempted
// request's tail first, so no sharer ever reads it unwritten here (a real engine might, in a
// step that writes and reads it at once).
#include <algorithm>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include <catch2/catch.hpp>

#include "collect_sink.h"
#include "fake_ranks.h"
#include "radiance/util/log.h"
#include "scheduler.h"

using namespace radiance::frontend;
using scheduler_test::Collect;
using scheduler_test::FakeRanks;
using scheduler_test::greedy;

namespace {

constexpr int64_t kVocab = 1000;
constexpr int kBlock = 4;

// The steps FakeRanks was sent.
struct StepLog {
    std::mutex mu;
    std::vector<radiance::ipc::StepMessage> steps;

    void attach(FakeRanks& ranks) {
        ranks.before_step = [this](const radiance::ipc::StepMessage& m) {
            std::lock_guard lk(mu);
            steps.push_back(m);
        };
    }
    // One row of a request in a step: its first position, its token count, its block table row.
    struct Row {
        int32_t first = 0, tokens = 0;
        std::vector<int32_t> table;
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

std::vector<int32_t> random_tokens(std::mt19937& rng, size_t n) {
    std::vector<int32_t> v(n);
    for (auto& t : v) t = static_cast<int32_t>(rng() % kVocab);
    return v;
}

SchedulerOptions options(int max_ctx = 64) {
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

// Runs one greedy request to its end and checks its tokens against the prompt decoded alone.
uint64_t run(Scheduler& s, const std::vector<int32_t>& prompt, int max_tokens, std::string salt = "") {
    auto sink = std::make_shared<Collect>();
    GenerationRequest r = greedy(prompt, max_tokens);
    r.cache_salt = std::move(salt);
    const uint64_t id = s.submit(std::move(r), sink);
    REQUIRE(sink->wait_done());
    CHECK(sink->why == FinishReason::Length);
    CHECK(sink->tokens == FakeRanks::reference(prompt, max_tokens, kVocab));
    return id;
}

}  // namespace

TEST_CASE("scheduler prefix: a shared prefix is prefilled from the cached length on the cached blocks", "[scheduler][prefix]") {
    radiance::log::set_level(radiance::log::Level::error);
    Served t(64, options());
    auto& [ranks, log, s] = t;
    std::mt19937 rng(11);
    const auto a = random_tokens(rng, 18);  // 4 full blocks and 2 tokens
    const uint64_t ida = run(s, a, 3);
    const auto a_rows = log.rows_of(ida);
    REQUIRE(a_rows.front().first == 0);

    SECTION("a prompt diverging inside a block shares the blocks before it") {
        auto b = std::vector<int32_t>(a.begin(), a.begin() + 14);
        const auto tail = random_tokens(rng, 6);
        b.insert(b.end(), tail.begin(), tail.end());
        const uint64_t idb = run(s, b, 4);
        const auto rows = log.rows_of(idb);
        CHECK(rows.front().first == 12);
        CHECK(rows.front().tokens == 8);
        CHECK(std::equal(a_rows.front().table.begin(), a_rows.front().table.begin() + 3, rows.front().table.begin()));
        CHECK(s.stats().prefix_cache_hits == 12);
        CHECK(s.stats().prefix_cache_queries == 18 + 20);
    }
    SECTION("a prompt the cache holds whole recomputes its last block (it needs the logits)") {
        const uint64_t idc = run(s, a, 3);
        CHECK(log.rows_of(idc).front().first == 16);
        CHECK(log.rows_of(idc).front().tokens == 2);
        const auto exact = std::vector<int32_t>(a.begin(), a.begin() + 16);  // ends on a block boundary
        const uint64_t idd = run(s, exact, 2);
        CHECK(log.rows_of(idd).front().first == 12);
        CHECK(log.rows_of(idd).front().tokens == 4);
    }
    SECTION("a conversation resent with the answer shares the answer's blocks too") {
        auto turn = a;
        const auto answer = FakeRanks::reference(a, 3, kVocab);
        turn.insert(turn.end(), answer.begin(), answer.end());  // 21 tokens; 20 computed: 5 blocks
        const auto more = random_tokens(rng, 5);
        turn.insert(turn.end(), more.begin(), more.end());
        const uint64_t ide = run(s, turn, 2);
        CHECK(log.rows_of(ide).front().first == 20);
    }
    SECTION("another salt shares nothing; the same salt shares") {
        const uint64_t x = run(s, a, 2, "tenant-x");
        CHECK(log.rows_of(x).front().first == 0);
        const uint64_t y = run(s, a, 2, "tenant-x");
        CHECK(log.rows_of(y).front().first == 16);
    }
}

TEST_CASE("scheduler prefix: off, every prompt is computed in full", "[scheduler][prefix]") {
    SchedulerOptions o = options();
    o.prefix_caching = false;
    Served t(64, o);
    auto& [ranks, log, s] = t;
    std::mt19937 rng(12);
    const auto a = random_tokens(rng, 18);
    run(s, a, 3);
    const uint64_t again = run(s, a, 3);
    CHECK(log.rows_of(again).front().first == 0);
    CHECK(s.stats().prefix_cache_hits == 0);
    CHECK(s.stats().kv_blocks_evictable == 0);
}

TEST_CASE("scheduler prefix: n requests of one prompt at once compute it once", "[scheduler][prefix]") {
    Served t(64, options());
    auto& [ranks, log, s] = t;
    std::mt19937 rng(13);
    const auto p = random_tokens(rng, 40);
    std::vector<std::shared_ptr<Collect>> sinks;
    for (int i = 0; i < 3; ++i) {
        sinks.push_back(std::make_shared<Collect>());
        s.submit(greedy(p, 6), sinks.back());
    }
    for (auto& c : sinks) {
        REQUIRE(c->wait_done());
        CHECK(c->tokens == FakeRanks::reference(p, 6, kVocab));
    }
    // The first computes all 40; the others wait a step, share 9 blocks and compute the last 4.
    CHECK(log.computed_below(40) == 40 + 4 + 4);
    CHECK(s.stats().prefix_cache_hits == 2 * 36);
}

TEST_CASE("scheduler prefix: a small pool evicts cached blocks and never refuses what fits", "[scheduler][prefix]") {
    Served t(12, options(48));
    auto& [ranks, log, s] = t;
    std::mt19937 rng(14);
    const auto x = random_tokens(rng, 20);
    run(s, x, 4);  // 23 tokens computed: 5 blocks kept
    CHECK(s.stats().kv_blocks_evictable == 5);
    const uint64_t again = run(s, x, 4);
    CHECK(log.rows_of(again).front().first == 16);
    // A request needing the whole pool: every cached block is evicted, nothing refused.
    const auto big = random_tokens(rng, 40);
    run(s, big, 8);
    CHECK(s.stats().kv_blocks_used == 0);
    const uint64_t evicted = run(s, x, 4);
    CHECK(log.rows_of(evicted).front().first == 0);  // x's blocks went first (least recently used)
    // And the big one's head survived the smaller request's eviction of its tail.
    const uint64_t head = run(s, big, 2);
    CHECK(log.rows_of(head).front().first > 0);
}

TEST_CASE("scheduler prefix: preemption and cancellation with shared blocks", "[scheduler][prefix]") {
    radiance::log::set_level(radiance::log::Level::error);
    SchedulerOptions o = options();
    o.max_seqs = 4;
    o.max_batch_tokens = 16;
    Served t(24, o);
    auto& [ranks, log, s] = t;
    ranks.before_step = [](const radiance::ipc::StepMessage&) { std::this_thread::sleep_for(std::chrono::microseconds(300)); };
    std::mt19937 rng(15);
    const auto prefix = random_tokens(rng, 16);
    std::vector<std::vector<int32_t>> prompts;
    std::vector<std::shared_ptr<Collect>> sinks;
    std::vector<uint64_t> ids;
    for (int i = 0; i < 10; ++i) {
        auto p = prefix;
        const auto own = random_tokens(rng, 1 + i % 7);
        p.insert(p.end(), own.begin(), own.end());
        prompts.push_back(p);
        sinks.push_back(std::make_shared<Collect>());
        ids.push_back(s.submit(greedy(p, 24), sinks.back()));
    }
    REQUIRE(sinks[1]->wait_tokens(3));
    s.cancel(ids[1]);
    s.cancel(ids[6]);
    for (size_t i = 0; i < sinks.size(); ++i) {
        INFO("request " << i);
        REQUIRE(sinks[i]->wait_done());
        const auto ref = FakeRanks::reference(prompts[i], 24, kVocab);
        if (i == 1 || i == 6) {
            CHECK(sinks[i]->why == FinishReason::Cancelled);
            CHECK(std::equal(sinks[i]->tokens.begin(), sinks[i]->tokens.end(), ref.begin()));
        } else {
            CHECK(sinks[i]->why == FinishReason::Length);
            CHECK(sinks[i]->tokens == ref);
        }
    }
    const SchedulerStats st = s.stats();
    CHECK(st.preemptions > 0);  // 24 blocks hold four of these, not ten
    CHECK(st.prefix_cache_hits >= 9 * 12);
    CHECK(st.kv_blocks_used == 0);  // every reference given back
    CHECK(st.kv_blocks_evictable > 0);
}

TEST_CASE("scheduler prefix: long shared prompts through chunked prefill and preemption", "[scheduler][prefix]") {
    // Prompts of three chunks or more: a request preempted mid-prefill leaves only what it computed
    // in the cache, and whoever shares it (itself, re-admitted) reads computed KV only.
    radiance::log::set_level(radiance::log::Level::error);
    const uint32_t seed = GENERATE(range(17u, 29u));
    INFO("seed " << seed);
    std::mt19937 rng(seed);
    SchedulerOptions o = options();
    o.max_seqs = 4;
    o.max_batch_tokens = 10 + static_cast<int>(rng() % 12);  // chunks ending inside blocks
    Served t(static_cast<int64_t>(18 + rng() % 8), o);
    auto& [ranks, log, s] = t;
    const std::vector<std::vector<int32_t>> prefixes = {random_tokens(rng, 40), random_tokens(rng, 37)};
    std::vector<std::vector<int32_t>> prompts;
    std::vector<std::shared_ptr<Collect>> sinks;
    for (int i = 0; i < 12; ++i) {
        auto p = i % 3 == 2 ? random_tokens(rng, 3) : prefixes[static_cast<size_t>(i % 3)];
        const auto own = random_tokens(rng, static_cast<size_t>(1 + i % 5));
        p.insert(p.end(), own.begin(), own.end());
        prompts.push_back(p);
        sinks.push_back(std::make_shared<Collect>());
        s.submit(greedy(p, 14), sinks.back());
    }
    for (size_t i = 0; i < sinks.size(); ++i) {
        INFO("request " << i);
        REQUIRE(sinks[i]->wait_done());
        CHECK(sinks[i]->tokens == FakeRanks::reference(prompts[i], 14, kVocab));
    }
    CHECK(s.stats().preemptions > 0);
    CHECK(s.stats().prefix_cache_hits > 0);
    CHECK(s.stats().kv_blocks_used == 0);
}

TEST_CASE("scheduler prefix: a rank that joined again holds nothing, and the front end forgets", "[scheduler][prefix]") {
    radiance::log::set_level(radiance::log::Level::error);
    Served t(64, options());
    auto& [ranks, log, s] = t;
    std::mt19937 rng(16);
    const auto a = random_tokens(rng, 18);
    run(s, a, 3);
    SECTION("between steps") {
        ranks.forget_kv();
        ++ranks.joins_;
        const uint64_t id = run(s, a, 3);
        CHECK(log.rows_of(id).front().first == 0);
        CHECK(s.stats().kv_blocks_evictable == 5);  // what it computed since
    }
    SECTION("during a step") {
        std::atomic<bool> armed{true};
        ranks.before_step = [&](const radiance::ipc::StepMessage& m) {
            {
                std::lock_guard lk(log.mu);
                log.steps.push_back(m);
            }
            if (armed.exchange(false)) {  // the step lands on a rank that just came back empty
                ranks.forget_kv();
                ++ranks.joins_;
            }
        };
        const uint64_t id = run(s, a, 3);
        const auto rows = log.rows_of(id);
        CHECK(rows.front().first == 16);  // it shared the cache...
        CHECK(rows[1].first == 0);        // ...and was recomputed from nothing after that step
        CHECK(s.stats().requeued_after_rank_loss == 1);
    }
}
