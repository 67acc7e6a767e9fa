// Pipelined steps (Engine::enqueue / collect) on libfakedev's pretend card: a step queued before
// the previous step's tokens are read, its rows fed those tokens on the card, must decode what
// lockstep steps decode; misuse is refused with an error that says what is wrong.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "../integration/converted_llama.h"
#include "radiance/container/container.h"
#include "radiance/core/registry.h"
#include "radiance/engine/engine.h"
#include "radiance/sampling/counter_rng.h"
#include "radiance/sampling/sampler.h"
#include "radiance/util/error.h"

using namespace radiance;
using Catch::Matchers::Contains;

namespace {

// RAD_TEST_DEVICE_KERNELS=libgpu RAD_TEST_DEVICE_HOMES=build/share/radiance runs these tests on a
// real card instead of the pretend one (the lead's GPU machine).
std::unique_ptr<engine::Engine> make_engine(const std::string& placement) {
    const char* kernels = std::getenv("RAD_TEST_DEVICE_KERNELS");
    const char* homes = std::getenv("RAD_TEST_DEVICE_HOMES");
    core::LoadOptions lo = placement == "device" && kernels && homes
                               ? core::load_options(homes, kernels)
                               : core::load_options(FAKE_HOMES, placement == "device" ? "libfakedev" : "libref");
    auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
    auto model = std::shared_ptr<const container::Reader>(container::Reader::open(testing::converted_llama()));
    engine::EngineOptions eo;
    eo.placement = placement;
    eo.select.accept_reference = true;
    eo.max_tok = 16;
    eo.max_seqs = 2;
    eo.max_ctx = 64;
    return engine::Engine::create(reg, model, eo);
}

constexpr int kStride = 4;  // blocks of 16: 64 positions a sequence

// Two sequences of `n` prompt tokens, one step each; returns their first tokens.
std::vector<int32_t> prefill(engine::Engine& e, int n) {
    std::vector<int32_t> first;
    for (int s = 0; s < 2; ++s) {
        engine::StepBatch b;
        for (int i = 0; i < n; ++i) {
            b.tokens.push_back(7 + 13 * i + 101 * s);
            b.positions.push_back(i);
        }
        b.cu_seqlens = {0, n};
        b.seq_ids = {s};
        b.out_ids = {n - 1};
        b.block_table_stride = kStride;
        for (int k = 0; k < kStride; ++k) b.block_tables.push_back(s * kStride + k);
        std::vector<float> lg;
        std::vector<int32_t> toks;
        engine::CardDraw greedy;
        greedy.on_card = true;
        e.step(b, lg, {greedy}, toks);
        first.push_back(toks.empty() ? 0 : toks[0]);  // a host plan leaves the pick to the caller
    }
    return first;
}

// Both sequences' decode row at position `pos`, with `tokens`.
engine::StepBatch decode_batch(const std::vector<int32_t>& tokens, int pos) {
    engine::StepBatch b;
    b.tokens = tokens;
    b.positions = {pos, pos};
    b.cu_seqlens = {0, 1, 2};
    b.seq_ids = {0, 1};
    b.out_ids = {0, 1};
    b.n_seq_decode = 2;
    b.block_table_stride = kStride;
    for (int k = 0; k < 2 * kStride; ++k) b.block_tables.push_back(k);
    return b;
}

std::vector<engine::CardDraw> greedy_draws(bool on_card = true) {
    std::vector<engine::CardDraw> d(2);
    for (auto& x : d) x.on_card = on_card;
    return d;
}

}  // namespace

TEST_CASE("pipelined decode steps fed on the card pick the tokens of lockstep steps", "[engine][pipelined]") {
    auto e = make_engine("device");
    constexpr int kPrompt = 9, kSteps = 8;
    std::vector<int32_t> next = prefill(*e, kPrompt);
    std::vector<std::vector<int32_t>> lockstep;
    for (int t = 0; t < kSteps; ++t) {
        std::vector<float> lg;
        std::vector<int32_t> toks;
        e->step(decode_batch(next, kPrompt + t), lg, greedy_draws(), toks);
        next = toks;
        lockstep.push_back(toks);
    }
    // The same decode again (the prompts' cache rewritten first), each step queued before the
    // previous one's tokens are collected; its tokens are placeholders the card replaces.
    next = prefill(*e, kPrompt);
    std::vector<std::vector<int32_t>> piped;
    e->enqueue(decode_batch(next, kPrompt), greedy_draws(), 0);
    for (int t = 0; t < kSteps; ++t) {
        if (t + 1 < kSteps) e->enqueue(decode_batch({-5, -5}, kPrompt + t + 1), greedy_draws(), 2);
        CHECK(e->queued_steps() == (t + 1 < kSteps ? 2u : 1u));
        std::vector<int32_t> toks;
        e->collect(toks);
        piped.push_back(toks);
    }
    CHECK(e->queued_steps() == 0);
    CHECK(piped == lockstep);
    // Fed from the previous step's first row only: the second row keeps the token it brought.
    next = prefill(*e, kPrompt);
    e->enqueue(decode_batch(next, kPrompt), greedy_draws(), 0);
    e->enqueue(decode_batch({-5, lockstep[0][1]}, kPrompt + 1), greedy_draws(), 1);
    std::vector<int32_t> a, b;
    e->collect(a);
    e->collect(b);
    CHECK(a == lockstep[0]);
    CHECK(b == lockstep[1]);
}

TEST_CASE("pipelined steps refuse misuse with a clear error and keep feeding after it", "[engine][pipelined]") {
    auto e = make_engine("device");
    std::vector<int32_t> next = prefill(*e, 5);
    std::vector<int32_t> toks;
    std::vector<float> lg;
    std::vector<std::vector<int32_t>> ref;  // three lockstep steps from the prompts
    for (int t = 0; t < 3; ++t) {
        e->step(decode_batch(next, 5 + t), lg, greedy_draws(), toks);
        ref.push_back(toks);
        next = toks;
    }
    const std::vector<int32_t> first = prefill(*e, 5), placeholder{-5, -5};
    CHECK_THROWS_WITH(e->collect(toks), Contains("no queued step"));
    // A row whose token is not picked on the card cannot be pipelined.
    CHECK_THROWS_WITH(e->enqueue(decode_batch(first, 5), greedy_draws(false), 0), Contains("picked on the card"));
    e->enqueue(decode_batch(first, 5), greedy_draws(), 0);
    CHECK_THROWS_WITH(e->enqueue(decode_batch(placeholder, 6), greedy_draws(), 3), Contains("fed from the previous step"));
    // Refused once staged (its slot is given back): a context past the plan's 64 positions.
    engine::StepBatch too_long = decode_batch(placeholder, 70);
    too_long.block_table_stride = 8;
    too_long.block_tables.assign(16, 0);
    CHECK_THROWS_WITH(e->enqueue(too_long, greedy_draws(), 2), Contains("longer than the plan"));
    CHECK_THROWS_WITH(e->step(decode_batch(first, 6), lg, greedy_draws(), toks), Contains("still queued"));
    e->enqueue(decode_batch(placeholder, 6), greedy_draws(), 2);
    CHECK_THROWS_WITH(e->enqueue(decode_batch(placeholder, 7), greedy_draws(), 2), Contains("two steps are queued"));
    e->collect(toks);
    CHECK(toks == ref[0]);
    e->collect(toks);
    CHECK(toks == ref[1]);
    e->enqueue(decode_batch(placeholder, 7), greedy_draws(), 2);
    e->collect(toks);
    CHECK(toks == ref[2]);
    // A step whose rows came back as logits leaves nothing to feed from.
    e->step(decode_batch(toks, 8), lg, greedy_draws(false), toks);
    CHECK(toks.empty());
    CHECK_THROWS_WITH(e->enqueue(decode_batch(placeholder, 9), greedy_draws(), 1), Contains("fed from the previous step"));
}

TEST_CASE("pipelined steps need the plan on a card", "[engine][pipelined]") {
    auto e = make_engine("host");
    prefill(*e, 5);
    CHECK_THROWS_WITH(e->enqueue(decode_batch({1, 2}, 5), greedy_draws(), 0), Contains("on a card"));
}

// Structured output on the pretend card: a constrained row's token is picked there with its mask
// (the `mask` operand of argmax and sample) and equals the host sampler's for the same logits,
// settings and mask; the unconstrained row beside it is untouched; steps with and without masks
// alternate, so recorded graphs of both kinds are replayed. Mutation seen failing: the engine
// not copying the masks (stage_mask_bytes left 0): the card picks from stale masks.
TEST_CASE("structured-output masks pick the host sampler's token on the card", "[engine][pipelined]") {
    auto e = make_engine("device");
    REQUIRE(e->mask_on_card());
    const int64_t V = e->vocab();
    const size_t words = static_cast<size_t>((V + 31) / 32);
    std::vector<int32_t> next = prefill(*e, 5);
    std::mt19937 rng(3);
    for (int t = 0; t < 12; ++t) {
        const int pos = 5 + t;
        engine::StepBatch b = decode_batch(next, pos);
        // the logits first (nothing picked on the card), then the same step with the picks there
        std::vector<float> lg;
        std::vector<int32_t> toks;
        e->step(b, lg, greedy_draws(false), toks);
        REQUIRE(lg.size() == static_cast<size_t>(2 * V));
        std::vector<uint32_t> mask(words, 0);
        const bool masked = t % 3 != 2;  // every third step unconstrained: both graph kinds replayed
        for (int k = 0; k < 1 + t % 5; ++k) {
            const auto id = static_cast<int32_t>(rng() % static_cast<uint32_t>(V));
            mask[static_cast<size_t>(id) >> 5] |= 1u << (id & 31);
        }
        std::vector<engine::CardDraw> d(2);
        step::SamplingParams p[2];
        for (int r = 0; r < 2; ++r) {
            d[r].on_card = true;
            d[r].temperature = p[r].temperature = t % 2 ? 0.9f : 0.0f;
            d[r].top_k = p[r].top_k = t % 4 == 1 ? 3 : 0;
            p[r].seed = 17;
            d[r].u = radiance::sampling::uniform_at(17, static_cast<uint64_t>(pos * 2 + r));
        }
        if (masked) d[0].allowed = mask.data();
        e->step(b, lg, d, toks);
        REQUIRE(toks.size() == 2);
        for (int r = 0; r < 2; ++r) {
            std::vector<float> row;
            std::vector<int32_t> none;
            e->step(b, row, greedy_draws(false), none);
            row.resize(static_cast<size_t>(2 * V));
            const std::span<const float> x(row.data() + r * V, static_cast<size_t>(V));
            const auto want = radiance::sampling::sample(x, p[r], {}, static_cast<uint64_t>(pos * 2 + r),
                                                         r == 0 && masked ? std::span<const uint32_t>(mask) : std::span<const uint32_t>());
            INFO("step " << t << " row " << r << (masked ? " masked" : ""));
            CHECK(toks[static_cast<size_t>(r)] == want.token);
            if (r == 0 && masked) CHECK(((mask[static_cast<size_t>(toks[0]) >> 5] >> (toks[0] & 31)) & 1u));
        }
        next = toks;
    }
}
