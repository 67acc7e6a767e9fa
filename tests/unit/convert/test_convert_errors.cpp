// rad-convert's refusals: each names what is wrong (tensor, file, shape, known model types).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unistd.h>

#include "radiance/container/container.h"
#include "radiance/convert/convert.h"
#include "radiance/convert/safetensors.h"
#include "convert_fixture.h"
#include "radiance/util/error.h"

using namespace radiance;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;
using convtest::Fixture;

TEST_CASE("a faithful copy converts, and the container carries the declared weights", "[convert]") {
    Fixture f;
    f.convert_it();
    auto r = container::Reader::open((f.dir / "out.rad").string());
    CHECK(r->find("blk.0.attn_qkv.weight") != nullptr);
    CHECK(r->find("blk.0.attn_qkv.weight")->shape == std::vector<int64_t>{64 + 32 + 32, 64});
    CHECK(r->meta().at("arch.id").s == "llama");
    CHECK(r->meta().at("model.head_dim").i == 16);
    CHECK_NOTHROW(r->verify_planes());
    CHECK_FALSE(fs::exists(f.dir / "out.rad.partial"));
}

TEST_CASE("a missing tensor is named with the files searched", "[convert]") {
    Fixture f;
    f.tensors.erase("model.layers.1.self_attn.k_proj.weight");
    CHECK_THROWS_WITH(f.convert_it(), Contains("blk.1.attn_qkv.weight") && Contains("model.layers.1.self_attn.k_proj.weight") &&
                                          Contains("model.safetensors"));
    CHECK_FALSE(fs::exists(f.dir / "out.rad"));
}

TEST_CASE("a wrong shape is named with both shapes", "[convert]") {
    Fixture f;
    auto& [t, bytes] = f.tensors["model.layers.0.mlp.down_proj.weight"];
    t.shape = {160, 64};  // transposed
    CHECK_THROWS_WITH(f.convert_it(), Contains("blk.0.ffn_down.weight") && Contains("[160, 64]") && Contains("[64, 160]"));
}

TEST_CASE("an unknown model type lists the known ones", "[convert]") {
    Fixture f;
    f.config["model_type"] = "llama_next";
    CHECK_THROWS_WITH(f.convert_it(), Contains("(llamanext, \"\")") && Contains("(llama, \"\")") && Contains("(qwen3, \"\")"));
}

TEST_CASE("parts of a stack must agree in dtype", "[convert]") {
    Fixture f;
    auto& [t, bytes] = f.tensors["model.layers.0.self_attn.v_proj.weight"];
    t.dtype = RAD_F16;
    CHECK_THROWS_WITH(f.convert_it(), Contains("v_proj.weight") && Contains("f16") && Contains("bf16"));
}

TEST_CASE("a folder without config.json is named", "[convert]") {
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    core::Registry reg = core::Registry::load(lo);
    convert::ConvertOptions o;
    o.src = "/nonexistent/model";
    o.out = "/tmp/x.rad";
    std::ostringstream log;
    CHECK_THROWS_WITH(convert::convert(reg, o, log), Contains("/nonexistent/model") && Contains("config.json"));
}

// A key the configuration states in the wrong kind or out of range is named, never passed over
// for a default: before, an rms_norm_eps of [1] and a rope_theta of "1e6" converted silently with
// the defaults, and a num_hidden_layers of -2 failed as "metadata lacks the model's dimensions".
// Mutation seen failing: real_of accepting any value (the eps and theta sections converted).
TEST_CASE("config values of the wrong kind or out of range are named", "[convert]") {
    Fixture f;
    SECTION("rms_norm_eps a list") {
        f.config["rms_norm_eps"] = nlohmann::json::array({1});
        CHECK_THROWS_WITH(f.convert_it(), Contains("'rms_norm_eps'") && Contains("[1]") && Contains("not a positive number"));
    }
    SECTION("rope_theta a string") {
        f.config["rope_theta"] = "1e6";
        CHECK_THROWS_WITH(f.convert_it(), Contains("'rope_theta'") && Contains("not a positive number"));
    }
    SECTION("num_hidden_layers negative") {
        f.config["num_hidden_layers"] = -2;
        CHECK_THROWS_WITH(f.convert_it(), Contains("'num_hidden_layers'") && Contains("-2"));
    }
    SECTION("intermediate_size a float") {
        f.config["intermediate_size"] = 1e30;
        CHECK_THROWS_WITH(f.convert_it(), Contains("'intermediate_size'"));
    }
    SECTION("a rope factor that is not a number") {
        f.config["rope_scaling"] = {{"rope_type", "linear"}, {"factor", "two"}};
        CHECK_THROWS_WITH(f.convert_it(), Contains("rope parameters") && Contains("'factor'"));
    }
    SECTION("null is absent") {
        f.config["head_dim"] = nullptr;
        CHECK_NOTHROW(f.convert_it());
    }
    CHECK_FALSE(fs::exists(f.dir / "out.rad.partial"));
}
