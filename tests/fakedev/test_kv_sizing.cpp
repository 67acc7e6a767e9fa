// The KV cache sized from memory when no block count is given (EngineOptions::kv_blocks 0), on
// libfakedev's pretend card (1 GiB, all of it reported free): max_seqs sequences of max_ctx when
// they fit, else what memory_utilization of the card leaves less a reserve (5% of the card).
//
// Mutations that fail it: plan_kv taking max_seqs x max_ctx blocks whatever memory says (the
// 1M-position plan then asks for ~16 GiB and throws); kv_budget ignoring memory_utilization
// (0.5 and 0.9 give the same count).
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "../integration/converted_llama.h"
#include "radiance/container/container.h"
#include "radiance/core/registry.h"
#include "radiance/engine/engine.h"
#include "radiance/util/error.h"

using namespace radiance;

namespace {

std::unique_ptr<engine::Engine> card_engine(int max_ctx, int max_seqs, double utilization) {
    core::LoadOptions lo = core::load_options(FAKE_HOMES, "libfakedev");
    auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
    auto model = std::shared_ptr<const container::Reader>(container::Reader::open(testing::converted_llama()));
    engine::EngineOptions eo;
    eo.placement = "device";
    eo.select.accept_reference = true;
    eo.max_tok = 16;
    eo.max_seqs = max_seqs;
    eo.max_ctx = max_ctx;
    eo.memory_utilization = utilization;
    return engine::Engine::create(reg, model, eo);
}

constexpr uint64_t kCard = 1ull << 30;  // libfakedev's memory_bytes, and what it reports free

}  // namespace

TEST_CASE("kv sizing: max_seqs sequences of max_ctx when they fit", "[engine][kv]") {
    auto e = card_engine(64, 2, 0.9);
    CHECK(e->kv_blocks() == 2 * (64 / 16));
}

TEST_CASE("kv sizing: a context memory cannot hold for every sequence gets what fits", "[engine][kv]") {
    auto e = card_engine(1 << 20, 16, 0.9);
    const int64_t wanted = 16 * ((1 << 20) / 16);
    const uint64_t budget = kCard - kCard / 10 - kCard / 20;
    INFO("blocks " << e->kv_blocks() << ", KV bytes " << e->kv_bytes());
    CHECK(e->kv_blocks() < wanted);
    CHECK(e->kv_bytes() <= budget);
    const uint64_t per_block = e->kv_bytes() / static_cast<uint64_t>(e->kv_blocks());
    CHECK(e->kv_bytes() + per_block > budget);  // all of the budget, less under a block
    auto half = card_engine(1 << 20, 16, 0.5);
    CHECK(half->kv_bytes() <= kCard / 2 - kCard / 20);
    CHECK(half->kv_blocks() < e->kv_blocks());
}

// (no "]" in a test name: catch_discover_tests then merges it with the names after it)
TEST_CASE("kv sizing: a memory utilization outside 0 < u <= 1 is refused by name", "[engine][kv]") {
    CHECK_THROWS_WITH(card_engine(1 << 20, 16, 0.0), Catch::Matchers::Contains("memory utilization"));
    CHECK_THROWS_WITH(card_engine(1 << 20, 16, 1.5), Catch::Matchers::Contains("memory utilization"));
}
