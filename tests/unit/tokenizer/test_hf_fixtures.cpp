// Replays fixtures recorded with Hugging Face `tokenizers` (hf_fixtures/make_fixtures.js):
// the real tokenizers on random texts and id sequences, and variants of them that exercise
// other components (Metaspace, Digits, Split behaviours, Lowercase/NFKC/NFD/StripAccents,
// ByteLevel with a prefix space, added-token flags). RAD_HF_FIXTURES overrides the folder.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tok_check.h"
#include "tokenizer_test_util.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string fixtures_dir() {
    const char* env = std::getenv("RAD_HF_FIXTURES");
    return env ? env : RAD_HF_FIXTURES_DIR;
}

json read_json(const fs::path& p) {
    std::ifstream in(p);
    REQUIRE(in.good());
    return json::parse(in);
}

void replay(const std::string& name) {
    fs::path fixture = fs::path(fixtures_dir()) / (name + ".json");
    json spec = read_json(fixture);
    // The tokenizer the fixture was made with: the base file with some parts replaced.
    json tokenizer = read_json(fs::path(tokenizer_test::shared_dir()) / "tokenizers" / spec["base"].get<std::string>() / "tokenizer.json");
    for (auto it = spec["overrides"].begin(); it != spec["overrides"].end(); ++it) tokenizer[it.key()] = it.value();
    for (const auto& t : spec["extra_added_tokens"]) tokenizer["added_tokens"].push_back(t);
    radiance::text::Tokenizer tok = radiance::text::Tokenizer::from_json(tokenizer.dump());

    std::ostringstream report;
    radiance::tools::TokCheckResult r = radiance::tools::run_tok_check(tok, fixture.string(), report);
    INFO(name << ":\n" << report.str().substr(0, 4000));
    CHECK(r.passed == static_cast<int>(spec["cases"].size() + spec["decodes"].size()));
    CHECK(r.failed == 0);
}

}  // namespace

TEST_CASE("tokenizer hf fixtures qwen3", "[tokenizer][hf]") { replay("qwen3"); }
TEST_CASE("tokenizer hf fixtures llama3", "[tokenizer][hf]") { replay("llama3"); }
TEST_CASE("tokenizer hf fixtures mistral", "[tokenizer][hf]") { replay("mistral"); }
TEST_CASE("tokenizer hf fixtures metaspace first", "[tokenizer][hf]") { replay("metaspace_first"); }
TEST_CASE("tokenizer hf fixtures metaspace split digits", "[tokenizer][hf]") { replay("metaspace_split_digits"); }
TEST_CASE("tokenizer hf fixtures metaspace never lowercase", "[tokenizer][hf]") { replay("metaspace_never_lowercase"); }
TEST_CASE("tokenizer hf fixtures bytelevel prefix nfd", "[tokenizer][hf]") { replay("bytelevel_prefix_nfd"); }
TEST_CASE("tokenizer hf fixtures split behaviours", "[tokenizer][hf]") { replay("split_behaviours"); }
TEST_CASE("tokenizer hf fixtures split removed", "[tokenizer][hf]") { replay("split_removed"); }
TEST_CASE("tokenizer hf fixtures added token flags", "[tokenizer][hf]") { replay("added_token_flags"); }
