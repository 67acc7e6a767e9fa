// The scheduler against FakeRanks (fake_ranks.h), whose answers depend on the KV it was given:
// continuous batching with chunked prefill and preemption by recompute must give every request
// the tokens of its prompt decoded alone; the context is cut to what the KV cache holds; abort_all
// ends everything as Aborted with the tokens so far; a step that crashes a worker three times in a
// row fails its requests and the scheduler goes on.
//
// Mutations seen failing (2026-12-04): preempt_newest() keeping the victim's `computed` (it
// resumes on blocks it no longer holds: 4 checks, wrong tokens); Scheduler::start() not cutting
// max_ctx_ (the context check); abort_all() using FinishReason::Cancelled (3 "Aborted" checks).
#include <atomic>
#include <chrono>
#include <memory>
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

}  // namespace

TEST_CASE("scheduler fake: every request decodes as alone, through chunking and preemption", "[scheduler]") {
    radiance::log::set_level(radiance::log::Level::error);
    FakeRanks ranks({4, 24, kVocab, 8});
    SchedulerOptions o;
    o.max_seqs = 4;
    o.max_batch_tokens = 16;
    o.max_ctx = 64;
    Scheduler s(ranks, o);
    s.start();
    std::mt19937 rng(5);
    std::vector<std::vector<int32_t>> prompts;
    std::vector<int> lengths;
    std::vector<std::shared_ptr<Collect>> sinks;
    for (int i = 0; i < 12; ++i) {
        std::vector<int32_t> p(5 + rng() % 26);
        for (auto& t : p) t = static_cast<int32_t>(rng() % kVocab);
        prompts.push_back(p);
        lengths.push_back(static_cast<int>(5 + rng() % 26));
        sinks.push_back(std::make_shared<Collect>());
        s.submit(greedy(p, lengths.back()), sinks.back());
    }
    for (size_t i = 0; i < sinks.size(); ++i) {
        INFO("request " << i);
        REQUIRE(sinks[i]->wait_done());
        CHECK(sinks[i]->why == FinishReason::Length);
        CHECK(sinks[i]->tokens == FakeRanks::reference(prompts[i], lengths[i], kVocab));
    }
    CHECK(s.stats().preemptions > 0);  // 24 blocks cannot hold four of these at once
    CHECK(ranks.max_rows <= 4);
}

TEST_CASE("scheduler fake: the context is cut to what the KV cache holds", "[scheduler]") {
    FakeRanks ranks({4, 10, kVocab, 8});
    SchedulerOptions o;
    o.max_ctx = 64;
    Scheduler s(ranks, o);
    CHECK(s.model_info().context_length == 64);
    s.start();
    CHECK(s.model_info().context_length == 40);
    CHECK_THROWS_AS(s.submit(greedy(std::vector<int32_t>(30, 1), 20), std::make_shared<Collect>()), BadRequest);
    auto ok = std::make_shared<Collect>();
    s.submit(greedy(std::vector<int32_t>(30, 1), 10), ok);
    REQUIRE(ok->wait_done());
    CHECK(ok->why == FinishReason::Length);
}

TEST_CASE("scheduler fake: abort_all ends every request as aborted with its tokens so far", "[scheduler]") {
    FakeRanks ranks({4, 400, kVocab, 8});
    ranks.before_step = [](const radiance::ipc::StepMessage&) { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
    SchedulerOptions o;
    o.max_ctx = 400;
    Scheduler s(ranks, o);
    s.start();
    std::vector<std::shared_ptr<Collect>> sinks;
    for (int i = 0; i < 3; ++i) {
        sinks.push_back(std::make_shared<Collect>());
        s.submit(greedy({1, 2, static_cast<int32_t>(i)}, 300), sinks.back());
    }
    for (auto& c : sinks) REQUIRE(c->wait_tokens(5));
    s.drain();
    CHECK(s.abort_all() == 3);
    for (int i = 0; i < 3; ++i) {
        REQUIRE(sinks[i]->wait_done());
        CHECK(sinks[i]->why == FinishReason::Aborted);
        const auto ref = FakeRanks::reference({1, 2, i}, 300, kVocab);
        CHECK(sinks[i]->tokens.size() < 300);
        CHECK(std::equal(sinks[i]->tokens.begin(), sinks[i]->tokens.end(), ref.begin()));
    }
}

TEST_CASE("scheduler fake: a step crashing a worker three times in a row fails its requests", "[scheduler]") {
    radiance::log::set_level(radiance::log::Level::error);
    FakeRanks ranks({4, 64, kVocab, 8});
    constexpr int32_t kPoison = 666;
    ranks.before_step = [&](const radiance::ipc::StepMessage& m) {
        for (int32_t t : m.batch.tokens)
            if (t == kPoison) {
                ++ranks.crashes_;
                throw RankLost(0, "rank 0 (pid 1) crashed");
            }
    };
    SchedulerOptions o;
    o.max_ctx = 64;
    Scheduler s(ranks, o);
    s.start();
    auto poison = std::make_shared<Collect>();
    s.submit(greedy({1, kPoison, 3}, 4), poison);
    REQUIRE(poison->wait_done());
    CHECK(poison->why == FinishReason::Error);
    CHECK(poison->error.find("3 times in a row") != std::string::npos);
    auto after = std::make_shared<Collect>();
    s.submit(greedy({1, 2, 3}, 4), after);
    REQUIRE(after->wait_done());
    CHECK(after->why == FinishReason::Length);
    CHECK(after->tokens == FakeRanks::reference({1, 2, 3}, 4, kVocab));
}

namespace {

// A constraint that allows exactly one token at each step: `script` in order, then complete. It
// counts the masks asked for and records the tokens it was told of.
struct Scripted : TokenConstraint {
    std::vector<int32_t> script;
    size_t at = 0;
    std::atomic<int> masks{0};
    std::vector<int32_t> accepted;
    bool dead_at_end = false;  // allow nothing once the script is done instead of completing
    bool allowed(std::span<uint32_t> words) override {
        ++masks;
        std::fill(words.begin(), words.end(), 0u);
        if (at >= script.size()) return false;
        words[static_cast<size_t>(script[at]) >> 5] |= 1u << (script[at] & 31);
        return true;
    }
    bool accept(int32_t t) override {
        accepted.push_back(t);
        return at < script.size() && script[at++] == t;
    }
    bool complete() const override { return !dead_at_end && at == script.size(); }
};

}  // namespace

// Structured output through the scheduler: each sampled row carries its constraint's mask, the
// constraint hears every token, a complete constraint ends the request as stopped, and one that
// allows nothing ends it in error while an unconstrained neighbour decodes as alone. Mutations
// seen failing: spec_of without the mask (the fake model's own tokens come back); the scheduler
// not ending on complete() (it asks for one more mask, gets none and ends in error: 1 check).
TEST_CASE("scheduler fake: a token constraint's masks, tokens and end", "[scheduler]") {
    radiance::log::set_level(radiance::log::Level::error);
    FakeRanks ranks({4, 24, kVocab, 8});
    SchedulerOptions o;
    o.max_seqs = 4;
    o.max_ctx = 64;
    Scheduler s(ranks, o);
    s.start();
    auto script = std::make_shared<Scripted>();
    script->script = {7, 999, 8, 0, 512};
    auto c = std::make_shared<Collect>();
    GenerationRequest r = greedy({1, 2, 3}, 20);
    r.constraint = script;
    s.submit(std::move(r), c);
    auto plain = std::make_shared<Collect>();
    s.submit(greedy({4, 5, 6, 7}, 6), plain);
    auto dead = std::make_shared<Scripted>();
    dead->script = {5, 6};
    dead->dead_at_end = true;
    auto d = std::make_shared<Collect>();
    GenerationRequest rd = greedy({9, 9}, 20);
    rd.constraint = dead;
    s.submit(std::move(rd), d);
    REQUIRE(c->wait_done());
    REQUIRE(plain->wait_done());
    REQUIRE(d->wait_done());
    CHECK(c->tokens == script->script);
    CHECK(c->why == FinishReason::Stop);
    CHECK(script->accepted == script->script);
    CHECK(script->masks.load() >= 5);
    CHECK(plain->tokens == FakeRanks::reference({4, 5, 6, 7}, 6, kVocab));
    CHECK(d->tokens == std::vector<int32_t>{5, 6});
    CHECK(d->why == FinishReason::Error);
    CHECK(d->error.find("the output constraint allows no token here") != std::string::npos);
    s.stop();
}
