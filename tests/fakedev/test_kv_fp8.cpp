// The fp8 KV cache (--kv-cache-dtype fp8) in the engine: at a fixed KV budget
// (EngineOptions::kv_memory_bytes, kv_blocks 0) it holds 2 hd / (hd + 4) times the blocks of a
// bf16 cache (its codes are half as wide, plus a 4-byte scale a token and kv head: 1.94x at
// head_dim 128, 1.6x at this fixture's 16), every plane allocated; and a card whose attention row
// cannot read fp8 (libfakedev declines it, as a card's library without an fp8 path does) refuses
// the plan at startup, naming attention and the cache's dtype.
//
// And an architecture written before attention's kv_dtype (which passes neither it nor the scale
// planes): the engine fills in the deployment's cache dtype, and under fp8 refuses it by name.
//
// Mutations seen failing (2026-12-07): plan_kv counting only the K and V planes in a block's bytes
// (the fp8 engine "holds" 2x and allocates past its budget: 3 checks); kv_plane_count answering 2
// for fp8 (no scale planes: 3 checks); libfakedev's attention row without its kv_dtype constraint
// (the card plans fp8); the builder not filling in kv_dtype (the REQUIRE); the builder filling it in
// under fp8 instead of refusing (the FAIL).
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "../integration/converted_llama.h"
#include "radiance/container/container.h"
#include "radiance/core/registry.h"
#include "radiance/engine/builder.h"
#include "radiance/engine/engine.h"
#include "radiance/util/error.h"

using namespace radiance;

namespace {

std::unique_ptr<engine::Engine> engine_with(const std::string& homes, const std::string& kernels, const std::string& placement,
                                            int kv_dtype, uint64_t budget) {
    core::LoadOptions lo = core::load_options(homes, kernels);
    auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
    auto model = std::shared_ptr<const container::Reader>(container::Reader::open(testing::converted_llama()));
    engine::EngineOptions eo;
    eo.placement = placement;
    eo.select.accept_reference = true;
    eo.max_tok = 16;
    eo.max_seqs = 16;
    eo.max_ctx = 1 << 16;  // far more than the budget holds: the budget decides
    eo.kv_memory_bytes = budget;
    eo.kv_dtype = kv_dtype;
    return engine::Engine::create(reg, model, eo);
}

// The attention of a plugin built before kv_dtype: a group of the deployment's dtype, an op without it.
int old_declare(RadBuilder* b, const RadModelMeta*, const RadBuildCtx* ctx) {
    RadKvGroupDecl kvd{};
    kvd.kind = RAD_KV_FULL;
    kvd.dtype = ctx->kv_dtype;
    kvd.n_head_kv = 2;
    kvd.head_dim = 16;
    kvd.n_planes = 2;
    const rad_kv kv = rad_decl_kv_group(b, "attn", &kvd);
    const RadParamDecl p[] = {RAD_RANGE("n", 1, 16), RAD_INT("n_head", 4), RAD_INT("n_head_kv", 2), RAD_INT("head_dim", 16),
                              RAD_F64("scale", 0.25)};
    rad_decl_op(b, "attention", p, 5, nullptr, 0);
    rad_bind_layer_kv(b, kv, 0);
    return RAD_OK;
}

engine::Declaration declare_old(int kv_dtype) {
    core::LoadOptions lo = core::load_options(RAD_BUILD_HOME_DIR, "libref");
    static const core::Registry reg = core::Registry::load(lo);
    core::ArchPlugin arch;
    arch.plugin = std::make_shared<core::Plugin>("old_arch", nullptr);
    arch.plugin->name = "old_arch";
    arch.declare = old_declare;
    engine::ModelMeta meta({});
    engine::DeclareOptions o;
    o.ctx.kv_dtype = kv_dtype;
    o.select.accept_reference = true;
    return engine::declare(arch, reg, meta, o);
}

}  // namespace

TEST_CASE("kv fp8: an architecture without kv_dtype gets the deployment's, and is refused under fp8", "[engine][kv][fp8]") {
    const engine::Declaration d = declare_old(RAD_BF16);
    REQUIRE(d.ops.size() == 1);
    REQUIRE(d.ops[0].geom.params.count("kv_dtype"));
    CHECK(d.ops[0].geom.params.at("kv_dtype").s == "bf16");
    CHECK(d.ops[0].res.ok());
    try {
        declare_old(RAD_FP8_E4M3);
        FAIL("an architecture passing no scale planes was declared under an fp8 cache");
    } catch (const Error& e) {
        INFO(e.what());
        CHECK(std::string(e.what()).find("op 'attention' is declared without kv_dtype") != std::string::npos);
    }
}

TEST_CASE("kv fp8: a fixed budget holds 2 hd / (hd + 4) times the bf16 blocks", "[engine][kv][fp8]") {
    const uint64_t budget = 1 << 20;
    auto bf16 = engine_with(RAD_BUILD_HOME_DIR, "libref", "host", RAD_BF16, budget);
    auto fp8 = engine_with(RAD_BUILD_HOME_DIR, "libref", "host", RAD_FP8_E4M3, budget);
    auto f32 = engine_with(RAD_BUILD_HOME_DIR, "libref", "host", RAD_F32, budget);
    // The shared llama fixture: 2 layers, 2 kv heads of 16, blocks of 16 tokens.
    const uint64_t layers = 2, heads = 2, hd = 16, block = 16;
    const uint64_t bf16_block = layers * block * 2 * heads * hd * 2, fp8_block = layers * block * 2 * heads * (hd + 4);
    INFO("blocks: f32 " << f32->kv_blocks() << ", bf16 " << bf16->kv_blocks() << ", fp8 " << fp8->kv_blocks());
    CHECK(static_cast<uint64_t>(bf16->kv_blocks()) == budget / bf16_block);
    CHECK(static_cast<uint64_t>(fp8->kv_blocks()) == budget / fp8_block);
    CHECK(static_cast<uint64_t>(f32->kv_blocks()) == budget / (2 * bf16_block));
    // every plane allocated, within the budget
    CHECK(fp8->kv_bytes() == static_cast<uint64_t>(fp8->kv_blocks()) * fp8_block);
    CHECK(fp8->kv_bytes() <= budget);
    const double ratio = static_cast<double>(fp8->kv_blocks()) / static_cast<double>(bf16->kv_blocks());
    CHECK(ratio == Approx(2.0 * hd / (hd + 4.0)).epsilon(0.01));
}

TEST_CASE("kv fp8: a card that cannot read it refuses the plan naming attention", "[engine][kv][fp8]") {
    try {
        engine_with(FAKE_HOMES, "libfakedev", "device", RAD_FP8_E4M3, 0);
        FAIL("the pretend card planned an fp8 KV cache its attention row does not read");
    } catch (const Error& e) {
        const std::string what = e.what();
        INFO(what);
        CHECK(what.find("'attention'") != std::string::npos);
        CHECK(what.find("kv_dtype") != std::string::npos);
        CHECK(what.find("fp8_e4m3") != std::string::npos);
    }
    // ... while a bf16 cache plans there as before
    CHECK(engine_with(FAKE_HOMES, "libfakedev", "device", RAD_BF16, 0)->kv_blocks() > 0);
}
