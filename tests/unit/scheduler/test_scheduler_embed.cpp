// Embedding requests (GenerationRequest::embed) in the scheduler, against FakeRanks, whose hidden
// rows are a function of the KV they read: prefill only (never an out row, never sampled),
// chunked beside generation in the same steps, pooled from the last row or the mean of every row
// exactly as the prompt alone gives, their blocks released once answered, and a mean never
// started from cached blocks (it needs every row).
//
// Mutation seen failing (2026-12-07): apply_hidden() pooling a mean as the last row (`last =
// true`): 12 of 289 checks, the mean requests' vectors, with the overlapped scheduler and without.
#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

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

struct EmbedCollect : Collect {
    std::vector<float> vec;
    int calls = 0;
    void on_embedding(const std::vector<float>& v) override {
        std::lock_guard lk(mu);
        vec = v;
        ++calls;
    }
};

GenerationRequest embedding(std::vector<int32_t> prompt, Pooling p) {
    GenerationRequest r;
    r.prompt = std::move(prompt);
    r.embed = p;
    return r;
}

// What the prompt alone pools to.
std::vector<float> reference(const std::vector<int32_t>& prompt, Pooling p, int32_t width) {
    if (p == Pooling::Last) return FakeRanks::hidden_of(prompt, width, kVocab);
    std::vector<double> sum(static_cast<size_t>(width), 0.0);
    for (size_t i = 1; i <= prompt.size(); ++i) {
        const auto v =
            FakeRanks::hidden_of(std::vector<int32_t>(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(i)), width, kVocab);
        for (size_t j = 0; j < v.size(); ++j) sum[j] += v[j];
    }
    std::vector<float> out;
    for (double x : sum) out.push_back(static_cast<float>(x / static_cast<double>(prompt.size())));
    return out;
}

}  // namespace

TEST_CASE("scheduler embed: embedding requests beside generation, chunked, pooled as alone", "[scheduler]") {
    radiance::log::set_level(radiance::log::Level::error);
    for (bool overlap : {true, false}) {
        INFO("overlap " << overlap);
        FakeRanks ranks({4, 64, kVocab, 8});
        std::vector<radiance::ipc::StepMessage> log;
        std::mutex log_mu;
        ranks.before_step = [&](const radiance::ipc::StepMessage& m) {
            std::lock_guard lk(log_mu);
            log.push_back(m);
        };
        SchedulerOptions o;
        o.max_seqs = 4;
        o.max_batch_tokens = 12;  // prompts of up to 40 tokens: several chunks each
        o.max_ctx = 64;
        o.hidden_size = ranks.hidden_width;
        o.overlap = overlap;
        Scheduler s(ranks, o);
        s.start();
        std::mt19937 rng(7);
        std::vector<std::vector<int32_t>> gen_prompts, emb_prompts;
        std::vector<Pooling> pools;
        std::vector<std::shared_ptr<Collect>> gens;
        std::vector<std::shared_ptr<EmbedCollect>> embs;
        std::vector<uint64_t> emb_ids;
        auto prompt = [&] {
            std::vector<int32_t> p(3 + rng() % 38);
            for (auto& t : p) t = static_cast<int32_t>(rng() % kVocab);
            return p;
        };
        for (int i = 0; i < 6; ++i) {
            gen_prompts.push_back(prompt());
            gens.push_back(std::make_shared<Collect>());
            s.submit(greedy(gen_prompts.back(), 12), gens.back());
            for (Pooling p : {Pooling::Last, Pooling::Mean}) {
                emb_prompts.push_back(i == 3 ? gen_prompts.back() : prompt());  // one shares a generation's prompt (cached blocks)
                pools.push_back(p);
                embs.push_back(std::make_shared<EmbedCollect>());
                emb_ids.push_back(s.submit(embedding(emb_prompts.back(), p), embs.back()));
            }
        }
        for (size_t i = 0; i < gens.size(); ++i) {
            INFO("generation " << i);
            REQUIRE(gens[i]->wait_done());
            CHECK(gens[i]->tokens == FakeRanks::reference(gen_prompts[i], 12, kVocab));
        }
        for (size_t i = 0; i < embs.size(); ++i) {
            INFO("embedding " << i << (pools[i] == Pooling::Mean ? " (mean)" : " (last)") << ", " << emb_prompts[i].size() << " tokens");
            REQUIRE(embs[i]->wait_done());
            CHECK(embs[i]->why == FinishReason::Stop);
            CHECK(embs[i]->calls == 1);
            CHECK(embs[i]->tokens.empty());
            CHECK(embs[i]->vec == reference(emb_prompts[i], pools[i], ranks.hidden_width));
        }
        // the same prompt again, now that its blocks are cached: equal (a mean recomputes every row)
        for (size_t i : {size_t(6), size_t(7)}) {
            auto again = std::make_shared<EmbedCollect>();
            s.submit(embedding(emb_prompts[i], pools[i]), again);
            REQUIRE(again->wait_done());
            CHECK(again->vec == embs[i]->vec);
        }
        // never an out row (no sampling), and batched with generation rows in some step
        bool mixed = false;
        for (const auto& m : log) {
            const auto& b = m.batch;
            bool gen_row = false, emb_row = false;
            for (size_t sq = 0; sq < b.seq_ids.size(); ++sq) {
                const bool is_emb = std::find_if(emb_ids.begin(), emb_ids.end(), [&](uint64_t id) {
                                        return static_cast<int32_t>(id & 0x7fffffff) == b.seq_ids[sq];
                                    }) != emb_ids.end();
                (is_emb ? emb_row : gen_row) = true;
                for (int32_t out : b.out_ids)
                    if (is_emb) CHECK_FALSE((out >= b.cu_seqlens[sq] && out < b.cu_seqlens[sq + 1]));
            }
            mixed |= gen_row && emb_row;
        }
        CHECK(mixed);
        // every block back once answered
        CHECK(s.stats().kv_blocks_used == 0);
        s.stop();
    }
}

TEST_CASE("scheduler embed: refusals name the input, and a server without embeddings refuses them", "[scheduler]") {
    FakeRanks ranks({4, 8, kVocab, 8});
    SchedulerOptions o;
    o.max_ctx = 64;
    o.hidden_size = 4;
    Scheduler s(ranks, o);
    s.start();
    auto sink = std::make_shared<EmbedCollect>();
    CHECK_THROWS_AS(s.submit(embedding({}, Pooling::Last), sink), BadRequest);
    try {
        s.submit(embedding({1, 2, 5000}, Pooling::Last), sink);
        FAIL("an id outside the vocabulary was taken");
    } catch (const BadRequest& e) {
        CHECK(e.param == "input");
    }
    // 8 blocks of 4 hold 32 tokens: a 33-token input could never run
    try {
        s.submit(embedding(std::vector<int32_t>(33, 1), Pooling::Last), sink);
        FAIL("an input larger than the cache was taken");
    } catch (const BadRequest& e) {
        CHECK(e.param == "input");
    }
    // exactly the context: fits (no token is generated after it)
    auto fits = std::make_shared<EmbedCollect>();
    s.submit(embedding(std::vector<int32_t>(32, 3), Pooling::Last), fits);
    REQUIRE(fits->wait_done());
    CHECK(fits->why == FinishReason::Stop);
    s.stop();

    FakeRanks plain_ranks({4, 8, kVocab, 8});
    SchedulerOptions p;
    Scheduler plain(plain_ranks, p);
    plain.start();
    CHECK_THROWS_AS(plain.submit(embedding({1, 2}, Pooling::Last), sink), BadRequest);
    plain.stop();
}
