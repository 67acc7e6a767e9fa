// The matcher's masks against brute force: at positions along random texts, every token of the
// vocabulary is tried on a copy of the matcher (accept_token, which walks the real stack), and
// the mask must allow exactly the tokens accepted. This covers the token tables (accepted,
// uncertain) and the cache of stack-dependent masks. Mutations seen failing: marking uncertain
// subtrees as refused in TokenWalker::classify (the recursive json grammar's closing tokens like
// "}]" go missing); skipping the cache key's return states (a mask of one depth served for another).
#include <catch2/catch.hpp>

#include "grammar_test_util.h"

using namespace gtest;

namespace {

const char* kNested = R"G(root ::= value
value ::= "[" ws (value ("," ws value)*)? "]" | "{" ws ("\"" [a-z]+ "\"" ws ":" ws value ("," ws "\"" [a-z]+ "\"" ws ":" ws value)*)? "}" | [0-9]+ | "\"" [a-z ]* "\""
ws ::= " "?
)G";

void check_against_brute_force(const std::shared_ptr<const CompiledGrammar>& c, uint32_t seed, int texts, int max_tokens) {
    const Vocabulary& v = c->vocabulary();
    std::mt19937 rng(seed);
    std::vector<uint32_t> mask(v.words()), brute(v.words());
    for (int t = 0; t < texts; ++t) {
        const Drawn d = draw(c, rng, max_tokens, 0.2);
        Matcher m(c);
        for (size_t k = 0; k <= d.tokens.size(); ++k) {
            if (k % 3 == 0 || k == d.tokens.size()) {  // every third position: brute force is slow
                m.fill_mask(mask);
                std::fill(brute.begin(), brute.end(), 0);
                for (int32_t id = 0; id < v.size(); ++id) {
                    Matcher probe(m);
                    if (probe.accept_token(id)) brute[static_cast<size_t>(id) >> 5] |= 1u << (id & 31);
                }
                size_t diff = 0;
                int32_t first = -1;
                for (size_t w = 0; w < mask.size(); ++w)
                    if (mask[w] != brute[w]) {
                        diff += static_cast<size_t>(__builtin_popcount(mask[w] ^ brute[w]));
                        if (first < 0) first = static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(mask[w] ^ brute[w])));
                    }
                INFO("after '" << d.text.substr(0, 200) << "' position " << k << ": first differing token " << first << " '"
                               << (first >= 0 ? std::string(v.bytes(first)) : "") << "'");
                CHECK(diff == 0);
                // a second time: from the cache where the stack decided
                std::vector<uint32_t> again(v.words());
                m.fill_mask(again);
                CHECK(again == mask);
            }
            if (k < d.tokens.size()) REQUIRE(m.accept_token(d.tokens[k]));
        }
    }
}

}  // namespace

TEST_CASE("grammar matcher: masks equal brute force on a recursive grammar (mistral's vocabulary)") {
    check_against_brute_force(CompiledGrammar::compile(gbnf_grammar(kNested), vocab("mistral")), 1, 6, 30);
}

TEST_CASE("grammar matcher: masks equal brute force for JSON object mode and a schema (llama3's vocabulary)") {
    check_against_brute_force(CompiledGrammar::compile(json_object_grammar(), vocab("llama3")), 2, 2, 24);
    check_against_brute_force(
        CompiledGrammar::compile(
            json_schema_grammar(nlohmann::ordered_json::parse(
                R"({"type":"object","properties":{"n":{"type":"integer"},"tags":{"type":"array","items":{"type":"string","maxLength":6}}},"required":["n"]})")),
            vocab("llama3")),
        3, 2, 30);
}

TEST_CASE("grammar matcher: ends, refusals, copies") {
    auto c = compile_bytes(regex_grammar("ab?"));
    Matcher m(c);
    CHECK_FALSE(m.can_end());
    CHECK_FALSE(m.accept_bytes("b"));
    CHECK(m.accept_bytes("a"));
    CHECK(m.can_end());
    CHECK_FALSE(m.finished());
    Matcher copy(m);
    CHECK(copy.accept_bytes("b"));
    CHECK(copy.finished());
    CHECK_FALSE(m.finished());  // the copy is independent
    CHECK_FALSE(copy.accept_bytes("b"));
    CHECK(copy.finished());
    CHECK_FALSE(m.accept_token(300));  // outside the vocabulary
}

TEST_CASE("grammar matcher: a deep recursion keeps one stack a level") {
    auto c = compile_bytes(gbnf_grammar("root ::= \"(\" root \")\" | \"x\"\n"));
    Matcher m(c);
    for (int i = 0; i < 500; ++i) REQUIRE(m.accept_bytes("("));
    CHECK(m.accept_bytes("x"));
    CHECK_FALSE(m.can_end());
    for (int i = 0; i < 500; ++i) REQUIRE(m.accept_bytes(")"));
    CHECK(m.finished());
}
