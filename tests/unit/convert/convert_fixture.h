// convert_fixture.h: a copy of a fixture's checkpoint (the shared llama one unless named) in a
// temporary folder, to be damaged by a test and converted (optionally by a recipe).
#pragma once
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "radiance/convert/convert.h"
#include "radiance/convert/safetensors.h"

namespace convtest {

namespace fs = std::filesystem;
using namespace radiance;

inline const char* kDtype(int dt) { return dt == RAD_BF16 ? "BF16" : dt == RAD_F16 ? "F16" : "F32"; }

// Writes a safetensors file from (name, tensor) pairs.
inline void write_st(const fs::path& p, const std::map<std::string, std::pair<convert::StTensor, std::vector<uint8_t>>>& ts) {
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
    explicit Fixture(const std::string& src = SHARED_LLAMA) {
        dir = fs::temp_directory_path() / ("rad_conv_" + std::to_string(getpid()) + "_" + std::to_string(rand()));
        fs::create_directories(dir);
        auto ck = convert::Checkpoint::open_folder(src);
        for (auto& [n, t] : ck.tensors()) tensors[n] = {t, std::vector<uint8_t>(t.data, t.data + t.bytes)};
        std::ifstream(src + "/config.json") >> config;
    }
    ~Fixture() { fs::remove_all(dir); }
    // Converts the folder (with a recipe: a preset's name or the text of a recipe file) to out.rad;
    // returns the log.
    // calib_dir: the calibration tap's folder for a recipe's gptq lines (ConvertOptions::calib_dir).
    std::string convert_it(const std::string& recipe = "", std::optional<std::string> quant = std::nullopt, const std::string& calib_dir = "") {
        write_st(dir / "model.safetensors", tensors);
        std::ofstream(dir / "config.json") << config.dump();
        static core::Registry reg = [] {
            core::LoadOptions lo;
            lo.homes = {RAD_BUILD_HOME_DIR};
            return core::Registry::load(lo);
        }();
        convert::ConvertOptions o;
        o.src = dir.string();
        o.out = (dir / "out.rad").string();
        if (!recipe.empty()) {
            const bool preset = recipe.find(' ') == std::string::npos;
            o.recipe = preset ? recipe : (dir / "recipe.txt").string();
            if (!preset) std::ofstream(o.recipe) << recipe;
        }
        o.quant = quant;
        o.calib_dir = calib_dir;
        std::ostringstream log;
        convert::convert(reg, o, log);
        return log.str();
    }
    // out.rad or its partial file is there
    bool any_output() const { return fs::exists(dir / "out.rad") || fs::exists(dir / "out.rad.partial"); }
};

}  // namespace convtest
