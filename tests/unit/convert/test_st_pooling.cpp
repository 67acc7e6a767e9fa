// A sentence-transformers folder's pooling and normalisation, as rad-convert keeps them for the
// server (embedding.pooling, embedding.normalize): last token, mean, the Normalize module, a
// Pooling module in another folder, nothing for a plain folder, a mode not served refused by name.
//
// Mutation seen failing (2026-12-07): read_st_pooling() without its several-modes refusal (a
// folder stating mean and last token would pool by one of them, where sentence-transformers
// concatenates both): the "both" check.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "radiance/convert/st_pooling.h"
#include "radiance/util/error.h"

using namespace radiance;
namespace fs = std::filesystem;

namespace {

struct Folder {
    fs::path dir = fs::temp_directory_path() / ("rad_st_pooling_" + std::to_string(getpid()));
    Folder() { fs::create_directories(dir); }
    ~Folder() { fs::remove_all(dir); }
    void write(const std::string& rel, const std::string& text) const {
        fs::create_directories((dir / rel).parent_path());
        std::ofstream(dir / rel) << text;
    }
    std::map<std::string, container::MetaValue> meta() const {
        std::map<std::string, container::MetaValue> m;
        convert::read_st_pooling(dir, m);
        return m;
    }
};

const char* kModules = R"([{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},
  {"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},
  {"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}])";

}  // namespace

TEST_CASE("st pooling: last token, normalised (Qwen3-Embedding's folder)", "[convert]") {
    Folder f;
    f.write("modules.json", kModules);
    f.write("1_Pooling/config.json", R"({"word_embedding_dimension":1024,"pooling_mode_cls_token":false,"pooling_mode_mean_tokens":false,
        "pooling_mode_lasttoken":true,"include_prompt":true})");
    auto m = f.meta();
    CHECK(m.at("embedding.pooling").s == "last");
    CHECK(m.at("embedding.normalize").s == "true");
}

TEST_CASE("st pooling: mean without Normalize, from the Pooling module's own folder", "[convert]") {
    Folder f;
    f.write("modules.json", R"([{"path":"","type":"sentence_transformers.models.Transformer"},
                                {"path":"pool","type":"sentence_transformers.models.Pooling"}])");
    f.write("pool/config.json", R"({"pooling_mode_mean_tokens":true})");
    auto m = f.meta();
    CHECK(m.at("embedding.pooling").s == "mean");
    CHECK(m.at("embedding.normalize").s == "false");
}

TEST_CASE("st pooling: two modes at once and CLS are refused by name, a plain folder adds nothing", "[convert]") {
    {
        Folder f;
        f.write("modules.json", kModules);
        f.write("1_Pooling/config.json", R"({"pooling_mode_mean_tokens":true,"pooling_mode_lasttoken":true})");
        CHECK_THROWS_WITH(f.meta(), Catch::Matchers::Contains("several pooling modes"));
    }
    {
        Folder f;
        CHECK(f.meta().empty());
    }
    {
        Folder f;
        f.write("modules.json", kModules);
        f.write("1_Pooling/config.json", R"({"pooling_mode_cls_token":true})");
        CHECK_THROWS_WITH(f.meta(), Catch::Matchers::Contains("pooling_mode_cls_token"));
    }
}
