// Token-level masks on real vocabularies (Qwen3 and Llama 3 byte-level, Mistral SentencePiece):
// tokens spanning several grammar terminals, a UTF-8 character split over byte tokens, special
// tokens never allowed, and a grammar the vocabulary cannot start refused at compile time.
#include <catch2/catch.hpp>

#include "grammar_test_util.h"

using namespace gtest;

namespace {

struct Masked {
    std::shared_ptr<const CompiledGrammar> c;
    Matcher m;
    std::vector<uint32_t> mask;
    explicit Masked(std::shared_ptr<const CompiledGrammar> g) : c(g), m(g), mask(g->vocabulary().words()) { m.fill_mask(mask); }
    bool has(int32_t id) const { return id >= 0 && ((mask[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1); }
    bool take(int32_t id) {
        const bool ok = m.accept_token(id);
        m.fill_mask(mask);
        return ok;
    }
};

int32_t id_of(const std::string& tok, const std::string& text) {
    const auto& t = tokenizer(tok);
    auto ids = t.encode(text, false);
    REQUIRE(ids.size() == 1);
    return ids[0];
}

}  // namespace

TEST_CASE("grammar tokens: tokens spanning several terminals, and special tokens never") {
    for (const char* name : {"qwen3", "llama3"}) {
        auto c = CompiledGrammar::compile(json_schema_grammar(nlohmann::ordered_json::parse(
                                              R"({"type":"object","properties":{"name":{"type":"string"}},"required":["name"]})")),
                                          vocab(name));
        Masked s(c);
        INFO(name);
        CHECK(s.has(id_of(name, "{\"")));  // "{" then the key's opening quote
        CHECK(s.has(id_of(name, "{")));
        CHECK_FALSE(s.has(id_of(name, " {")));
        CHECK_FALSE(s.has(id_of(name, "[")));
        for (int32_t sp : tokenizer(name).special_token_ids()) CHECK_FALSE(s.has(sp));
        REQUIRE(s.take(id_of(name, "{\"")));
        CHECK(s.has(id_of(name, "name")));
        CHECK_FALSE(s.has(id_of(name, "nam") == id_of(name, "name") ? -1 : id_of(name, "x")));
        REQUIRE(s.take(id_of(name, "name")));
        CHECK(s.has(id_of(name, "\":")));  // closes the key and reads the colon
        REQUIRE(s.take(id_of(name, "\":")));
        CHECK(s.has(id_of(name, " \"")));
        REQUIRE(s.take(id_of(name, " \"")));
        CHECK(s.has(id_of(name, "Hello")));
        CHECK(s.has(id_of(name, "\"}")));  // ends the string and the object at once
        REQUIRE(s.take(id_of(name, "\"}")));
        CHECK(s.m.finished());
        for (size_t w = 0; w < s.mask.size(); ++w) CHECK(s.mask[w] == 0u);
    }
}

TEST_CASE("grammar tokens: a character split over byte tokens") {
    // "é" is C3 A9. Qwen3 and Llama 3 have the whole character as a token and each byte alone.
    for (const char* name : {"qwen3", "llama3"}) {
        auto v = vocab(name);
        int32_t first = -1, second = -1, whole = -1;
        for (int32_t id = 0; id < v->size(); ++id) {
            if (v->bytes(id) == "\xC3") first = id;
            if (v->bytes(id) == "\xA9") second = id;
            if (v->bytes(id) == "\xC3\xA9") whole = id;
        }
        REQUIRE(first >= 0);
        REQUIRE(second >= 0);
        REQUIRE(whole >= 0);
        auto c = CompiledGrammar::compile(choice_grammar({"caf\xC3\xA9", "caf\xC3\xA8s"}), v);
        Masked s(c);
        REQUIRE(s.take(id_of(name, "caf")));
        CHECK(s.has(whole));
        CHECK(s.has(first));
        CHECK_FALSE(s.has(second));
        REQUIRE(s.take(first));
        CHECK(s.has(second));
        CHECK_FALSE(s.has(first));
        CHECK_FALSE(s.m.can_end());  // half a character is not the end
        REQUIRE(s.take(second));
        CHECK(s.m.finished());
    }
    // Mistral: byte-fallback tokens <0xC3> <0xA9>
    auto v = vocab("mistral");
    const auto& t = tokenizer("mistral");
    const int32_t c3 = *t.token_to_id("<0xC3>"), a9 = *t.token_to_id("<0xA9>");
    auto c = CompiledGrammar::compile(regex_grammar("\xC3\xA9+"), v);
    Masked s(c);
    CHECK(s.has(c3));
    REQUIRE(s.take(c3));
    CHECK(s.has(a9));
    REQUIRE(s.take(a9));
    CHECK(s.m.can_end());
}

TEST_CASE("grammar tokens: SentencePiece word-start spaces count as bytes") {
    const auto& t = tokenizer("mistral");
    auto c = CompiledGrammar::compile(regex_grammar("hello world"), vocab("mistral"));
    Masked s(c);
    const int32_t hello = *t.token_to_id("hello"), space_world = *t.token_to_id("\xE2\x96\x81world"),
                  space_hello = *t.token_to_id("\xE2\x96\x81hello");
    CHECK(s.has(hello));
    CHECK_FALSE(s.has(space_hello));
    REQUIRE(s.take(hello));
    CHECK(s.has(space_world));
    REQUIRE(s.take(space_world));
    CHECK(s.m.finished());
}

TEST_CASE("grammar tokens: a grammar no token can start is refused at compile time") {
    // A vocabulary of "a" and "b" only: a grammar for "c" can never begin.
    auto v = Vocabulary::build({"a", "b", "<eos>"}, {1, 1, 0}, 3);
    CHECK_THROWS_WITH(CompiledGrammar::compile(regex_grammar("c"), v),
                      "no token of the model's vocabulary can begin text this grammar accepts");
    CHECK_NOTHROW(CompiledGrammar::compile(regex_grammar("ab*"), v));
    Matcher m(CompiledGrammar::compile(regex_grammar("ab*"), v));
    std::vector<uint32_t> mask(v->words());
    m.fill_mask(mask);
    CHECK(mask[0] == 1u);  // "a" only; never the unusable id 2
    CHECK_FALSE(m.accept_token(2));
}
