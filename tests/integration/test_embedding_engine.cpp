// The embedding program (rad_declare_pooled) through the engine alone, no scheduler or worker: an
// independent check of what the pooled rows are. A row's pooled output must be the final normed
// hidden state, the head's input: the head's weight times it gives that row's logits (read from
// the container, computed here in double, against the step's own logits). And the rows of a
// prompt prefilled in one step equal those of the same prompt prefilled in chunks over the KV
// cache, for libref and libcpu.
//
// Mutation seen failing (2026-12-07): llama.cpp's pooled rows skipping the final norm (its
// op_pool_norm issue commented out): |W h - logits| 0.50 against logits of 0.01, libref and libcpu.
#include <catch2/catch.hpp>

#include <cmath>
#include <memory>
#include <numeric>

#include "converted_llama.h"
#include "radiance/container/container.h"
#include "radiance/core/registry.h"
#include "radiance/engine/engine.h"
#include "radiance/rad_plugin.h"

using namespace radiance;

namespace {

std::unique_ptr<engine::Engine> host_engine(const std::string& kernels) {
    core::LoadOptions lo = core::load_options(RAD_BUILD_HOME_DIR, kernels);
    auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
    auto model = std::shared_ptr<const container::Reader>(container::Reader::open(testing::converted_llama()));
    engine::EngineOptions eo;
    eo.placement = "host";
    eo.select.accept_reference = true;
    eo.max_tok = 32;
    eo.max_seqs = 4;
    eo.max_ctx = 64;
    eo.kv_blocks = 16;
    return engine::Engine::create(reg, model, eo);
}

// A one-sequence step over positions [from, from + n) of `prompt`, blocks 0.. in order.
engine::StepBatch chunk(const std::vector<int32_t>& prompt, int from, int n, int block, bool all_hidden) {
    engine::StepBatch b;
    for (int i = from; i < from + n; ++i) {
        b.tokens.push_back(prompt[static_cast<size_t>(i)]);
        b.positions.push_back(i);
    }
    b.cu_seqlens = {0, n};
    b.seq_ids = {0};
    const int blocks = (static_cast<int>(prompt.size()) + block - 1) / block;
    for (int k = 0; k < blocks; ++k) b.block_tables.push_back(k);
    b.block_table_stride = blocks;
    b.out_ids = {n - 1};
    if (all_hidden)
        for (int i = 0; i < n; ++i) b.hidden_ids.push_back(i);
    else
        b.hidden_ids = {n - 1};
    return b;
}

}  // namespace

TEST_CASE("embedding engine: pooled rows are the head's input, chunked as whole", "[engine][embed]") {
    for (const std::string kernels : {"libref", "libcpu,libref"}) {
        INFO(kernels);
        auto e = host_engine(kernels);
        REQUIRE(e->hidden_width() > 0);
        const int64_t d = e->hidden_width(), V = e->vocab();
        const std::vector<int32_t> prompt = {1, 17, 250, 9, 33, 77, 5, 120, 64, 3, 18, 42, 7};
        const int n = static_cast<int>(prompt.size());
        std::vector<float> logits;
        e->step(chunk(prompt, 0, n, e->kv_block_size(), true), logits);
        const std::vector<float> whole = e->hidden_rows();
        REQUIRE(whole.size() == static_cast<size_t>(n * d));
        const std::vector<float> last_logits = logits;

        // the head's weight (tied: the embedding table) times the last row gives its logits
        auto c = container::Reader::open(testing::converted_llama());
        const container::TensorInfo* w = c->find("output.weight");
        if (!w) w = c->find("token_embd.weight");
        REQUIRE(w);
        REQUIRE(w->shape[0] == V);
        const uint8_t* wp = c->plane_data(*w, 0);
        double worst = 0, scale = 0;
        for (int64_t v = 0; v < V; ++v) {
            double dot = 0;
            for (int64_t k = 0; k < d; ++k)
                dot += static_cast<double>(rad_load_f32(w->dtype, wp, v * d + k)) * whole[static_cast<size_t>((n - 1) * d + k)];
            worst = std::max(worst, std::abs(dot - last_logits[static_cast<size_t>(v)]));
            scale = std::max(scale, std::abs(dot));
        }
        INFO("largest |W h - logits| " << worst << " of " << scale);
        CHECK(worst <= 1e-4 * std::max(1.0, scale));

        // the same prompt in chunks of 5 (a fresh engine: an empty cache): equal rows
        auto f = host_engine(kernels);
        std::vector<float> chunked;
        for (int from = 0; from < n; from += 5) {
            f->step(chunk(prompt, from, std::min(5, n - from), f->kv_block_size(), true), logits);
            chunked.insert(chunked.end(), f->hidden_rows().begin(), f->hidden_rows().end());
        }
        REQUIRE(chunked.size() == whole.size());
        double diff = 0;
        for (size_t i = 0; i < whole.size(); ++i) diff = std::max(diff, static_cast<double>(std::abs(chunked[i] - whole[i])));
        CHECK(diff <= 1e-5);

        // a step asking for more hidden rows than it has tokens is refused by name
        engine::StepBatch bad = chunk(prompt, 0, 3, f->kv_block_size(), false);
        bad.hidden_ids = {7};
        CHECK_THROWS_WITH(f->step(bad, logits), Catch::Matchers::Contains("hidden id"));
    }
}
