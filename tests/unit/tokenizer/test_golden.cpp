// Golden files recorded with transformers: every case must match exactly.
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "tok_check.h"

namespace {

void check_golden(const std::string& name) {
    std::string dir = std::string(RAD_SHARED_DIR) + "/tokenizers/" + name;
    radiance::text::Tokenizer tok = radiance::tools::load_tokenizer_any(dir + "/tokenizer.json");
    std::ostringstream report;
    radiance::tools::TokCheckResult r = radiance::tools::run_tok_check(tok, dir + "/golden.json", report);
    INFO(report.str());
    CHECK(r.passed > 0);
    CHECK(r.failed == 0);
}

}  // namespace

TEST_CASE("tokenizer golden qwen3", "[tokenizer][golden]") { check_golden("qwen3"); }
TEST_CASE("tokenizer golden llama3", "[tokenizer][golden]") { check_golden("llama3"); }
TEST_CASE("tokenizer golden mistral", "[tokenizer][golden]") { check_golden("mistral"); }
