// Phi-3's config as its checkpoints write it (transformers 4's rope_scaling of type "su" or
// "longrope" with per-frequency factor lists, original_max_position_embeddings beside it, fused
// qkv_proj and gate_up_proj) becomes a container of the phi3 plugin's weights; what the plugin
// cannot serve is refused by name. Mutations seen failing: the converter not reading the
// top-level original_max_position_embeddings (rope.orig_ctx absent); the factor lists written
// one value short (the plugin then refuses the conversion).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "radiance/container/container.h"
#include "radiance/convert/convert.h"
#include "radiance/util/error.h"

using namespace radiance;
namespace fs = std::filesystem;

namespace {

nlohmann::json phi3_config() {
    nlohmann::json c = {{"model_type", "phi3"},
                        {"architectures", {"Phi3ForCausalLM"}},
                        {"hidden_size", 64},
                        {"intermediate_size", 128},
                        {"num_hidden_layers", 2},
                        {"num_attention_heads", 4},
                        {"num_key_value_heads", 4},
                        {"vocab_size", 512},
                        {"max_position_embeddings", 131072},
                        {"original_max_position_embeddings", 4096},
                        {"rms_norm_eps", 1e-5},
                        {"rope_theta", 10000.0},
                        {"hidden_act", "silu"},
                        {"sliding_window", 262144},
                        {"tie_word_embeddings", false}};
    c["rope_scaling"] = {{"type", "su"},
                         {"short_factor", {1.0, 1.02, 1.05, 1.1, 1.2, 1.4, 1.7, 2.0}},
                         {"long_factor", {1.0, 1.5, 2.5, 4.0, 8.0, 16.0, 32.0, 48.0}}};
    return c;
}

// rad-convert --random-weights on the config; the container, or the error's text
std::unique_ptr<container::Reader> convert_config(const nlohmann::json& cfg, std::string* error) {
    const fs::path dir = fs::temp_directory_path() / ("rad_phi3_" + std::to_string(getpid())) / "phi3";
    fs::create_directories(dir);
    std::ofstream(dir / "config.json") << cfg.dump(2);
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    core::Registry reg = core::Registry::load(lo);
    convert::ConvertOptions o;
    o.src = dir.string();
    o.out = (dir.parent_path() / "phi3.rad").string();
    o.random_weights = true;
    std::ostringstream log;
    try {
        convert::convert(reg, o, log);
    } catch (const std::exception& e) {
        *error = e.what();
        fs::remove_all(dir.parent_path());
        return nullptr;
    }
    auto r = container::Reader::open(o.out);
    return r;
}

std::string meta(const container::Reader& r, const std::string& k) { return r.meta().count(k) ? r.meta().at(k).to_string() : "(absent)"; }

}  // namespace

TEST_CASE("phi3: LongRoPE's factors and lengths reach the container, the fused projections are its weights", "[convert][phi3]") {
    std::string error;
    auto r = convert_config(phi3_config(), &error);
    INFO(error);
    REQUIRE(r);
    CHECK(meta(*r, "arch.id") == "phi3");
    CHECK(meta(*r, "rope.type") == "su");
    CHECK(meta(*r, "rope.orig_ctx") == "4096");
    CHECK(meta(*r, "rope.short_factor") == "1,1.02,1.05,1.1000000000000001,1.2,1.3999999999999999,1.7,2");
    CHECK(meta(*r, "rope.long_factor") == "1,1.5,2.5,4,8,16,32,48");
    const container::TensorInfo* qkv = r->find("blk.0.attn_qkv.weight");
    REQUIRE(qkv);
    CHECK(qkv->shape == std::vector<int64_t>{3 * 64, 64});
    const container::TensorInfo* gu = r->find("blk.1.ffn_gate_up.weight");
    REQUIRE(gu);
    CHECK(gu->shape == std::vector<int64_t>{2 * 128, 64});
}

TEST_CASE("phi3: factor lists that do not fit the rotation, and activations it has no row for, are refused by name", "[convert][phi3]") {
    std::string error;
    auto cfg = phi3_config();
    cfg["rope_scaling"]["long_factor"].erase(0);
    CHECK_FALSE(convert_config(cfg, &error));
    CHECK(error.find("long_factor") != std::string::npos);
    CHECK(error.find("8 numbers") != std::string::npos);

    cfg = phi3_config();
    cfg["hidden_act"] = "gelu_new";
    CHECK_FALSE(convert_config(cfg, &error));
    CHECK(error.find("hidden_act 'gelu_new'") != std::string::npos);

    cfg = phi3_config();
    cfg["rope_scaling"]["type"] = "dynamic";
    CHECK_FALSE(convert_config(cfg, &error));
    CHECK(error.find("rope scaling 'dynamic'") != std::string::npos);
}
