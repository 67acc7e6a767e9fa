// The stream decoder against full decodes of random id sequences: byte tokens, special
// tokens, partial UTF-8, everything.
#include <random>
#include <string>

#include <catch2/catch.hpp>

#include "radiance/text/stream_decoder.h"
#include "tokenizer_test_util.h"

namespace {

using radiance::text::TokenId;

void check_stream(const radiance::text::Tokenizer& tok, const std::vector<TokenId>& ids, bool skip) {
    radiance::text::StreamDecoder decoder(tok, skip);
    std::string out;
    for (TokenId id : ids) out += decoder.step(id);
    out += decoder.flush();
    REQUIRE(out == tok.decode(ids, skip));
}

}  // namespace

TEST_CASE("tokenizer stream random ids", "[tokenizer][stream]") {
    for (const char* name : {"qwen3", "llama3", "mistral", "gpt2"}) {
        const auto& tok = tokenizer_test::reference(name);
        std::mt19937 rng(42);
        auto vocab = static_cast<TokenId>(tok.vocab_size());
        std::uniform_int_distribution<TokenId> any(0, vocab - 1), low(0, 600), len(0, 40);
        for (int round = 0; round < 300; ++round) {
            std::vector<TokenId> ids;
            // Low ids are single bytes and byte-fallback tokens: the hard cases.
            for (int n = len(rng); n > 0; --n) ids.push_back(round % 2 ? any(rng) : low(rng));
            INFO(name << " round " << round);
            check_stream(tok, ids, false);
            check_stream(tok, ids, true);
        }
    }
}

TEST_CASE("tokenizer stream random text", "[tokenizer][stream]") {
    for (const char* name : {"qwen3", "llama3", "mistral"}) {
        const auto& tok = tokenizer_test::reference(name);
        std::mt19937 rng(11);
        for (int round = 0; round < 300; ++round) {
            std::vector<TokenId> ids = tok.encode(tokenizer_test::random_text(rng), true);
            INFO(name << " round " << round);
            check_stream(tok, ids, false);
            check_stream(tok, ids, true);
        }
    }
}

TEST_CASE("tokenizer stream holds incomplete characters", "[tokenizer][stream]") {
    // "你" is three byte-fallback tokens in mistral; nothing may come out before the third.
    const auto& tok = tokenizer_test::reference("mistral");
    radiance::text::StreamDecoder decoder(tok);
    std::vector<TokenId> ids = tok.encode("\xF0\x9F\x98\x80!", false);  // an emoji Mistral spells in bytes
    std::string out;
    for (size_t i = 0; i + 1 < ids.size(); ++i) {
        std::string piece = decoder.step(ids[i]);
        CHECK(piece.find("\xEF\xBF\xBD") == std::string::npos);
        out += piece;
    }
    out += decoder.step(ids.back());
    out += decoder.flush();
    CHECK(out == tok.decode(ids));
}
