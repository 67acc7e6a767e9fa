// rad-convert --random-weights: the container a real checkpoint would give, but with drawn weights.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "radiance/container/container.h"
#include "radiance/convert/convert.h"
#include "radiance/convert/random_weights.h"
#include "radiance/rad_plugin.h"

using namespace radiance;
namespace fs = std::filesystem;

namespace {

std::unique_ptr<container::Reader> convert_to(const fs::path& src, const fs::path& out, bool random, uint64_t seed = 0) {
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    core::Registry reg = core::Registry::load(lo);
    convert::ConvertOptions o;
    o.src = src.string();
    o.out = out.string();
    o.random_weights = random;
    o.random_seed = seed;
    std::ostringstream log;
    convert::convert(reg, o, log);
    return container::Reader::open(out.string());
}

float bf16_at(const std::vector<uint8_t>& b, size_t i) {
    uint16_t h;
    std::memcpy(&h, b.data() + 2 * i, 2);
    return rad_bf16_to_f32(h);
}

}  // namespace

TEST_CASE("random weights: the real checkpoint's metadata and weights (names, shapes, dtypes), from config.json alone",
          "[convert][random]") {
    const fs::path tmp = fs::temp_directory_path() / ("rad_rand_" + std::to_string(getpid()));
    // the same folder name both ways: the model's name in the metadata comes from it
    fs::create_directories(tmp / "a" / "llama");
    fs::create_directories(tmp / "b" / "llama");
    fs::copy_file(fs::path(SHARED_LLAMA) / "config.json", tmp / "b" / "llama" / "config.json");
    // generation_config.json is metadata too (gen.eos_token_ids), not weights
    if (fs::exists(fs::path(SHARED_LLAMA) / "generation_config.json"))
        fs::copy_file(fs::path(SHARED_LLAMA) / "generation_config.json", tmp / "b" / "llama" / "generation_config.json");
    auto real = convert_to(SHARED_LLAMA, tmp / "a" / "real.rad", false);
    auto drawn = convert_to(tmp / "b" / "llama", tmp / "b" / "drawn.rad", true, 7);
    // the fixture's folder is also named llama, so every key matches
    REQUIRE(real->meta().size() == drawn->meta().size());
    for (const auto& [k, v] : real->meta()) {
        INFO(k);
        REQUIRE(drawn->meta().count(k));
        CHECK(drawn->meta().at(k).to_string() == v.to_string());
    }
    REQUIRE(real->tensors().size() == drawn->tensors().size());
    for (const auto& t : real->tensors()) {
        INFO(t.name);
        const container::TensorInfo* d = drawn->find(t.name);
        REQUIRE(d != nullptr);
        CHECK(d->shape == t.shape);
        CHECK(d->dtype == t.dtype);
    }
    CHECK_NOTHROW(drawn->verify_planes());
    // norm weights are ones, as a fresh Hugging Face model has them
    const container::TensorInfo* norm = drawn->find("blk.0.attn_norm.weight");
    REQUIRE(norm != nullptr);
    uint16_t first;
    std::memcpy(&first, drawn->plane_data(*norm, 0), 2);
    CHECK(rad_bf16_to_f32(first) == 1.0f);
    fs::remove_all(tmp);
}

TEST_CASE("random_weight: normal(0, std) matrices, ones for norms, zeros for biases, fixed by seed and name", "[convert][random]") {
    const std::vector<int64_t> shape{1024, 2048};  // 2^19 blocks of four: the threaded path
    auto a = convert::random_weight("blk.0.ffn_up.weight", shape, RAD_BF16, 0.02, 1);
    REQUIRE(a.size() == 1024u * 2048u * 2u);
    CHECK(a == convert::random_weight("blk.0.ffn_up.weight", shape, RAD_BF16, 0.02, 1));
    CHECK(a != convert::random_weight("blk.0.ffn_up.weight", shape, RAD_BF16, 0.02, 2));
    CHECK(a != convert::random_weight("blk.1.ffn_up.weight", shape, RAD_BF16, 0.02, 1));
    const size_t n = a.size() / 2;
    double sum = 0, sq = 0;
    size_t beyond2 = 0;
    for (size_t i = 0; i < n; ++i) {
        const double v = bf16_at(a, i);
        sum += v;
        sq += v * v;
        beyond2 += std::fabs(v) > 0.04;
    }
    const double mean = sum / n, sd = std::sqrt(sq / n - mean * mean);
    CHECK(std::fabs(mean) < 1e-4);                                        // the mean's own spread is 0.02 / sqrt(2M) = 1.4e-5
    CHECK(std::fabs(sd - 0.02) < 0.02 * 0.01);                            // within 1%
    CHECK(std::fabs(static_cast<double>(beyond2) / n - 0.0455) < 0.002);  // a normal's tails
    auto norm = convert::random_weight("blk.3.attn_norm.weight", {64}, RAD_F32, 0.02, 1);
    auto bias = convert::random_weight("blk.3.attn_qkv.bias", {64}, RAD_F16, 0.02, 1);
    for (size_t i = 0; i < 64; ++i) {
        float v;
        std::memcpy(&v, norm.data() + 4 * i, 4);
        CHECK(v == 1.0f);
        CHECK((bias[2 * i] | bias[2 * i + 1]) == 0);
    }
    CHECK_THROWS(convert::random_weight("x", {4, 4}, RAD_I32, 0.02, 1));
}
