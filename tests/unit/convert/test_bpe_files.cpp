// GPT-2's vocab.json + merges.txt written as a tokenizer.json (bpe_files.h): the tokenizer the
// front end loads from it encodes and decodes as the original files do, ids as Hugging Face gives
// them. (Mutation: add_prefix_space true in the pre-tokenizer fails "Hello world" and the
// comparison on every text that does not start with a space.)
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "radiance/convert/bpe_files.h"
#include "radiance/text/tokenizer.h"
#include "radiance/util/error.h"

namespace {

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace

TEST_CASE("convert: GPT-2's vocab.json + merges.txt become a tokenizer.json", "[convert][tokenizer]") {
    const std::string dir = RAD_SHARED_DIR "/tokenizers/gpt2";
    const std::string json = radiance::convert::tokenizer_json_from_bpe_files(slurp(dir + "/encoder.json"), slurp(dir + "/vocab.bpe"), dir);
    const auto tok = radiance::text::Tokenizer::from_json(json);
    const auto orig = radiance::text::Tokenizer::from_gpt2_files(dir + "/encoder.json", dir + "/vocab.bpe");
    using Ids = std::vector<radiance::text::TokenId>;
    CHECK(tok.encode("Hello world", false) == Ids{15496, 995});  // Hugging Face's ids
    CHECK(tok.encode("<|endoftext|>", false) == Ids{50256});
    CHECK(tok.is_special(50256));
    for (const char* text : {"", " ", "  leading spaces", "naïve café", "tabs\tand\r\nlines", "emoji 👍🏽 done", "numbers 1234567 3.14",
                             "don't I'll we've", "Call me Ishmael.<|endoftext|>Some years ago"}) {
        CAPTURE(text);
        CHECK(tok.encode(text, false) == orig.encode(text, false));
        CHECK(tok.decode(tok.encode(text, false), false) == text);
    }
}

TEST_CASE("convert: a malformed merges.txt names its line", "[convert][tokenizer]") {
    try {
        radiance::convert::tokenizer_json_from_bpe_files(R"({"a": 0, "b": 1, "ab": 2})", "#version: 0.2\na b\nab\n", "/m");
        FAIL("no error");
    } catch (const radiance::Error& e) {
        CHECK(std::string(e.what()).find("/m/merges.txt line 3") != std::string::npos);
    }
    CHECK_THROWS_AS(radiance::convert::tokenizer_json_from_bpe_files("[1, 2]", "", "/m"), radiance::Error);
}
