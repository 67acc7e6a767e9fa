// Random text: encode -> decode gives the text back (NFC-normalised for qwen3), the fast
// byte-level path equals the general pipeline, and invalid UTF-8 is repaired, never fatal.
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "unicode.h"  // internal header: the tests check the repair it does
#include "tokenizer_test_util.h"

namespace {

using radiance::text::TokenId;
namespace unicode = radiance::text::unicode;

constexpr int kRounds = 400;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
    return s;
}

}  // namespace

TEST_CASE("tokenizer roundtrip byte-level random text", "[tokenizer][roundtrip]") {
    for (const char* name : {"qwen3", "llama3", "gpt2"}) {
        const auto& tok = tokenizer_test::reference(name);
        bool nfc = std::string(name) == "qwen3";
        std::mt19937 rng(1234);
        for (int i = 0; i < kRounds; ++i) {
            std::string text = tokenizer_test::random_text(rng);
            std::string want = nfc ? unicode::normalize(text, unicode::Form::NFC) : text;
            std::vector<TokenId> ids = tok.encode(text, false);
            INFO(name << " round " << i);
            REQUIRE(tok.decode(ids, false) == want);
            REQUIRE(tok.decode(tok.encode(text, true), true) == want);
        }
    }
}

TEST_CASE("tokenizer roundtrip mistral random text", "[tokenizer][roundtrip]") {
    // Lossless except that "▁" is the space marker: it decodes as a space.
    const auto& tok = tokenizer_test::reference("mistral");
    std::mt19937 rng(99);
    for (int i = 0; i < kRounds; ++i) {
        std::string text = tokenizer_test::random_text(rng);
        std::vector<TokenId> ids = tok.encode(text, true);
        INFO("round " << i);
        REQUIRE(!ids.empty());
        REQUIRE(ids[0] == 1);  // <s>
        REQUIRE(tok.decode(ids, true) == replace_all(text, "\xE2\x96\x81", " "));
    }
}

TEST_CASE("tokenizer fast byte-level path equals the general pipeline", "[tokenizer][roundtrip]") {
    for (const char* name : {"qwen3", "llama3"}) {
        const auto& fast = tokenizer_test::reference(name, true);
        const auto& general = tokenizer_test::reference(name, false);
        std::mt19937 rng(7);
        for (int i = 0; i < kRounds; ++i) {
            std::string text = tokenizer_test::random_text(rng);
            INFO(name << " round " << i);
            REQUIRE(fast.encode(text, true) == general.encode(text, true));
        }
    }
}

TEST_CASE("tokenizer invalid UTF-8 is replaced with U+FFFD", "[tokenizer][roundtrip]") {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> byte(0, 255), len(0, 64);
    for (const char* name : {"qwen3", "llama3", "mistral", "gpt2"}) {
        const auto& tok = tokenizer_test::reference(name);
        for (int i = 0; i < kRounds; ++i) {
            std::string bytes;
            for (int n = len(rng); n > 0; --n) bytes.push_back(static_cast<char>(byte(rng)));
            std::string repaired;
            unicode::append_lossy(repaired, bytes);
            INFO(name << " round " << i);
            REQUIRE(unicode::is_valid_utf8(repaired));
            REQUIRE(tok.encode(bytes, true) == tok.encode(repaired, true));
        }
        // The documented example of the Unicode "maximal subpart" rule.
        std::string repaired;
        unicode::append_lossy(repaired, "Hello \xF0\x90\x80World");
        CHECK(repaired == "Hello \xEF\xBF\xBDWorld");
    }
}

TEST_CASE("tokenizer long inputs without a pre-tokenizer", "[tokenizer][roundtrip]") {
    // Mistral has no pre-tokenizer: the whole text is one word, cut internally before "▁".
    const auto& tok = tokenizer_test::reference("mistral");
    std::mt19937 rng(3);
    std::string text;
    while (text.size() < 200000) text += tokenizer_test::random_text(rng) + " ";
    CHECK(tok.decode(tok.encode(text, false), false) == replace_all(text, "\xE2\x96\x81", " "));
}
