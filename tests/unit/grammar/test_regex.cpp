// Regular expressions against std::regex (ECMAScript, full match) as the independent reference,
// byte by byte and as texts drawn token by token; errors name the offset.
#include <catch2/catch.hpp>
#include <regex>

#include "grammar_test_util.h"

using namespace gtest;

namespace {

std::string error_of(const char* pattern) {
    try {
        regex_grammar(pattern);
    } catch (const GrammarError& e) {
        return e.where + ": " + e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("grammar regex: the same strings as std::regex") {
    struct Case {
        const char* pattern;
        std::vector<const char*> texts;
    };
    const std::vector<Case> cases = {
        {"[a-z]+@[a-z]+\\.(com|org)", {"a@b.com", "ab@cd.org", "a@b.net", "@b.com", "a@b.comm", "A@b.com"}},
        {"\\d{3}-\\d{4}", {"555-1234", "55-1234", "5555-1234", "555-12345", "abc-defg"}},
        {"(ab|a)(bc|c)?", {"a", "ab", "abc", "ac", "abbc", "b", ""}},
        {"^x*y?$", {"", "x", "xxy", "y", "yx"}},
        {"[^a-c]{2,3}", {"dd", "ddd", "dddd", "da", "d"}},
        {"(?:yes|no)\\s+(?P<n>\\d+)", {"yes 1", "no\t22", "yes1", "maybe 1"}},
        {"a{2}b{1,}c{0,2}", {"aab", "aabbbcc", "aabccc", "ab", "aac"}},
        {"\\w+\\W\\S", {"ab_9 x", "ab x", "a!b", "ab  "}},
        {"[\\d.]+|-", {"1.2", "..", "-", "--", ""}},
        {"colou?r|gr[ae]y", {"color", "colour", "gray", "grey", "gry"}},
        {"a.c", {"abc", "a\nc", "ac", "a-c"}},
        {"[a\\-z]x", {"-x", "ax", "zx", "bx"}},
        {"\\u00e9+|\\x41", {"\xC3\xA9\xC3\xA9", "A", "e"}},
        {"a+?b*?", {"a", "aabb", "b"}},
    };
    for (const auto& c : cases) {
        auto m = compile_bytes(regex_grammar(c.pattern));
        std::string ecma = c.pattern;
        ecma = std::regex_replace(ecma, std::regex("\\(\\?P<"), "(?<");  // std::regex knows neither named form
        ecma = std::regex_replace(ecma, std::regex("\\(\\?<n>"), "(");
        const std::regex ref(ecma);
        for (const char* t : c.texts) {
            INFO(c.pattern << " on '" << t << "'");
            if (std::string(c.pattern).find("\\u00e9") != std::string::npos) {
                CHECK(matches(m, t) == (std::string(t) != "e"));  // std::regex reads bytes, not UTF-8
                continue;
            }
            CHECK(matches(m, t) == std::regex_match(t, ref));
        }
    }
}

TEST_CASE("grammar regex: errors name the offset") {
    CHECK(error_of("ab(c") == "offset 2: unbalanced '('");
    CHECK(error_of("a)b") == "offset 1: unbalanced ')'");
    CHECK(error_of("(a)\\1") == "offset 3: backreferences are not supported");
    CHECK(error_of("a(?=b)") == "offset 1: lookaround is not supported");
    CHECK(error_of("\\bword") == "offset 0: word boundaries (\\b) are not supported");
    CHECK(error_of("[abc") == "offset 0: unterminated character class");
    CHECK(error_of("a{3,2}") == "offset 1: a repetition's upper bound is below its lower bound");
    CHECK(error_of("*a") == "offset 0: nothing to repeat before '*'");
    CHECK(error_of("a^b") == "offset 1: '^' is supported only at the start");
    CHECK(error_of("[[:alpha:]]") == "offset 1: POSIX classes ([:alpha:]) are not supported");
    CHECK(error_of("a{99999}") == "offset 6: a repetition count above 10000");
}

TEST_CASE("grammar regex: texts drawn over real vocabularies match") {
    const std::vector<const char*> patterns = {"(\\d{3}) \\d{3}-\\d{4}", "[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8}){0,2}", "(true|false|maybe)",
                                               "[a-f0-9]{8}-[a-f0-9]{4}", "x(ab|cd)*y"};
    for (const char* name : {"qwen3", "llama3", "mistral"})
        for (const char* p : patterns) {
            auto c = CompiledGrammar::compile(regex_grammar(p), vocab(name));
            const std::regex ref(p);
            std::mt19937 rng(5);
            for (int i = 0; i < 10; ++i) {
                const Drawn d = draw(c, rng, 60, 0.3);
                INFO(name << " " << p << ": '" << d.text << "'");
                if (d.ended) CHECK(std::regex_match(d.text, ref));
            }
        }
}

TEST_CASE("grammar regex: choice lists") {
    auto c = compile_bytes(choice_grammar({"red", "green", "greenish", "\xE7\xBA\xA2"}));
    for (const char* ok : {"red", "green", "greenish", "\xE7\xBA\xA2"}) CHECK(matches(c, ok));
    for (const char* bad : {"", "re", "blue", "greenis", "redred"}) CHECK_FALSE(matches(c, bad));
    CHECK_THROWS_AS(choice_grammar({}), GrammarError);
    CHECK_THROWS_AS(choice_grammar({"\xFF"}), GrammarError);
}
