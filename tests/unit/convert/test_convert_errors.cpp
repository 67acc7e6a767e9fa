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
#include "radiance/util/error.h"

using namespace radiance;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

const char* kDtype(int dt) { return dt == RAD_BF16 ? "BF16" : dt == RAD_F16 ? "F16" : "F32"; }

// Writes a safetensors file from (name, tensor) pairs.
void write_st(const fs::path& p, const std::map<std::string, std::pair<convert::StTensor, std::vector<uint8_t>>>& ts) {
    nlohmann::json h = nlohmann::json::object();
    std::string data;
    for (auto& [n, tv] : ts) {
        const auto& [t, bytes] = tv;
        h[n] = {{"dtype", kDtype(t.dtype)}, {"shape", t.shape}, {"data_offsets", {data.size(), data.size() + bytes.size()}}};
        data.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    }
    std::string hs = h.dump();
    uint64_t n = hs.size();
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(&n), 8);
    out << hs << data;
}

struct Fixture {
    fs::path dir;
    std::map<std::string, std::pair<convert::StTensor, std::vector<uint8_t>>> tensors;
    nlohmann::json config;
    Fixture() {
        dir = fs::temp_directory_path() / ("rad_conv_" + std::to_string(getpid()) + "_" + std::to_string(rand()));
        fs::create_directories(dir);
        auto ck = convert::Checkpoint::open_folder(SHARED_LLAMA);
        for (auto& [n, t] : ck.tensors()) tensors[n] = {t, std::vector<uint8_t>(t.data, t.data + t.bytes)};
        std::ifstream(std::string(SHARED_LLAMA) + "/config.json") >> config;
    }
    ~Fixture() { fs::remove_all(dir); }
    std::string convert_it() {
        write_st(dir / "model.safetensors", tensors);
        std::ofstream(dir / "config.json") << config.dump();
        core::LoadOptions lo;
        lo.homes = {RAD_BUILD_HOME_DIR};
        core::Registry reg = core::Registry::load(lo);
        convert::ConvertOptions o;
        o.src = dir.string();
        o.out = (dir / "out.rad").string();
        std::ostringstream log;
        convert::convert(reg, o, log);
        return log.str();
    }
};

}  // namespace

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
