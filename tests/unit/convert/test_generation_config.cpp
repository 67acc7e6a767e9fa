// generation_config.json's eos ids into the container (gen.eos_token_ids), where the front end
// reads what ends a generation. Mutation seen failing: only the first id of a list kept.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "radiance/container/container.h"
#include "radiance/convert/convert.h"
#include "radiance/convert/hf_config.h"
#include "radiance/util/error.h"

using namespace radiance;
namespace fs = std::filesystem;

namespace {

// The shared llama fixture's config with `generation` beside it, converted with drawn weights.
std::unique_ptr<container::Reader> convert_with(const std::string& generation) {
    const fs::path dir = fs::temp_directory_path() / ("rad_gencfg_" + std::to_string(getpid())) / "llama";
    fs::remove_all(dir.parent_path());
    fs::create_directories(dir);
    fs::copy_file(fs::path(SHARED_LLAMA) / "config.json", dir / "config.json");
    std::ofstream(dir / "generation_config.json") << generation;
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    core::Registry reg = core::Registry::load(lo);
    convert::ConvertOptions o;
    o.src = dir.string();
    o.out = (dir.parent_path() / "m.rad").string();
    o.random_weights = true;
    std::ostringstream log;
    convert::convert(reg, o, log);
    return container::Reader::open(o.out);
}

std::string gen_ids(const container::Reader& r) {
    auto it = r.meta().find("gen.eos_token_ids");
    return it == r.meta().end() ? "(absent)" : it->second.to_string();
}

}  // namespace

TEST_CASE("convert: generation_config.json's eos ids, one or a list, reach the container", "[convert]") {
    CHECK(gen_ids(*convert_with(R"({"bos_token_id": 1, "eos_token_id": [128001, 128008, 128009]})")) == "128001,128008,128009");
    CHECK(gen_ids(*convert_with(R"({"eos_token_id": 2})")) == "2");
    CHECK(gen_ids(*convert_with(R"({"temperature": 0.6})")) == "(absent)");
    CHECK_THROWS_WITH(convert_with(R"({"eos_token_id": ["x"]})"), Catch::Contains("eos_token_id holds \"x\""));
    CHECK_THROWS_WITH(convert_with("{not json"), Catch::Contains("generation_config.json: not valid JSON"));
}
