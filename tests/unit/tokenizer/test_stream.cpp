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

TEST_CASE("tokenizer stream without a decoder and with a Metaspace decoder", "[tokenizer][stream]") {
    // No decoder: the library joins token strings with spaces. Metaspace drops the first
    // token's "▁". Both must stream to the same text as a full decode.
    const std::string vocab = R"({"\u2581a":0,"\u2581":1,"b":2,"<0xE4>":3,"<0xBD>":4,"<0xA0>":5,"<s>":6})";
    const std::string plain = R"({"version":"1.0","added_tokens":[{"id":6,"content":"<s>","single_word":false,)"
                              R"("lstrip":false,"rstrip":false,"normalized":false,"special":true}],"normalizer":null,)"
                              R"("pre_tokenizer":null,"post_processor":null,"decoder":null,"model":{"type":"BPE","vocab":)" +
                              vocab + R"(,"merges":[]}})";
    std::string metaspace = plain;
    metaspace.replace(metaspace.find(R"("decoder":null)"), 14,
                      R"("decoder":{"type":"Metaspace","replacement":"▁","prepend_scheme":"always","split":true})");
    for (const std::string& json : {plain, metaspace}) {
        radiance::text::Tokenizer tok = radiance::text::Tokenizer::from_json(json);
        std::mt19937 rng(8);
        std::uniform_int_distribution<TokenId> id(0, 7), len(0, 12);  // 7: unknown, ignored
        for (int round = 0; round < 500; ++round) {
            std::vector<TokenId> ids;
            for (int n = len(rng); n > 0; --n) ids.push_back(id(rng));
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
