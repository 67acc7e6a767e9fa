// Golden files recorded with transformers: every case must match exactly, and the stream
// decoder must reproduce every decode.
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "radiance/text/stream_decoder.h"
#include "tok_check.h"
#include "tokenizer_test_util.h"

namespace {

using radiance::text::TokenId;

void check_golden(const std::string& name) {
    std::string dir = tokenizer_test::shared_dir() + "/tokenizers/" + name;
    radiance::text::Tokenizer tok = radiance::tools::load_tokenizer_any(dir + "/tokenizer.json");
    std::ostringstream report;
    radiance::tools::TokCheckResult r = radiance::tools::run_tok_check(tok, dir + "/golden.json", report);
    INFO(report.str());
    CHECK(r.passed == 28);
    CHECK(r.failed == 0);
}

std::string stream(const radiance::text::Tokenizer& tok, const std::vector<TokenId>& ids, bool skip) {
    radiance::text::StreamDecoder decoder(tok, skip);
    std::string out;
    for (TokenId id : ids) out += decoder.step(id);
    return out + decoder.flush();
}

void check_golden_stream(const std::string& name) {
    const auto& tok = tokenizer_test::reference(name);
    std::ifstream in(tokenizer_test::shared_dir() + "/tokenizers/" + name + "/golden.json");
    nlohmann::json golden = nlohmann::json::parse(in);
    for (const auto& c : golden["cases"]) {
        for (const char* field : {"ids", "ids_with_special"}) {
            auto ids = c[field].get<std::vector<TokenId>>();
            for (bool skip : {false, true}) {
                INFO(name << " " << field << " skip=" << skip << " text: " << c["text"].get<std::string>());
                CHECK(stream(tok, ids, skip) == tok.decode(ids, skip));
            }
        }
    }
}

}  // namespace

TEST_CASE("tokenizer golden qwen3", "[tokenizer][golden]") { check_golden("qwen3"); }
TEST_CASE("tokenizer golden llama3", "[tokenizer][golden]") { check_golden("llama3"); }
TEST_CASE("tokenizer golden mistral", "[tokenizer][golden]") { check_golden("mistral"); }

TEST_CASE("tokenizer golden stream qwen3", "[tokenizer][golden][stream]") { check_golden_stream("qwen3"); }
TEST_CASE("tokenizer golden stream llama3", "[tokenizer][golden][stream]") { check_golden_stream("llama3"); }
TEST_CASE("tokenizer golden stream mistral", "[tokenizer][golden][stream]") { check_golden_stream("mistral"); }
