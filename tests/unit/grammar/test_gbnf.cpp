// GBNF: the parser's errors, and llama.cpp's example grammars (json, arithmetic, list; their
// languages restated here) accepting and refusing what they should, byte by byte and token by
// token.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>

#include "grammar_test_util.h"

using namespace gtest;

namespace {

const char* kJson = R"G(root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws

object ::=
  "{" ws (
            string ":" ws value
    ("," ws string ":" ws value)*
  )? "}" ws

array  ::=
  "[" ws (
            value
    ("," ws value)*
  )? "]" ws

string ::=
  "\"" (
    [^"\\\x7F\x00-\x1F] |
    "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) # escapes
  )* "\"" ws

number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws

# optional space after literal characters
ws ::= | " " | "\n" [ \t]{0,20}
)G";

const char* kArithmetic = R"G(root  ::= (expr "=" ws term "\n")+
expr  ::= term ([-+*/] term)*
term  ::= ident | num | "(" ws expr ")" ws
ident ::= [a-z] [a-z0-9_]* ws
num   ::= [0-9]+ ws
ws    ::= [ \t\n]*
)G";

const char* kList = "root ::= item+\n# no line breaks inside an item\nitem ::= \"- \" [^\\r\\n\\x0b\\x0c\\x85\\u2028\\u2029]+ \"\\n\"\n";

std::string where_of(const char* text) {
    try {
        gbnf_grammar(text);
    } catch (const GrammarError& e) {
        return e.where + ": " + e.what();
    }
    return "";
}

// An independent check of arithmetic.gbnf's language: recursive descent over the text.
struct Arith {
    std::string s;
    size_t i = 0;
    void ws() {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n')) ++i;
    }
    bool term() {
        if (i < s.size() && s[i] >= 'a' && s[i] <= 'z') {
            while (i < s.size() &&
                   (std::islower(static_cast<unsigned char>(s[i])) || std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '_'))
                ++i;
            return ws(), true;
        }
        if (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
            while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
            return ws(), true;
        }
        if (i < s.size() && s[i] == '(') {
            ++i;
            ws();
            if (!expr() || i >= s.size() || s[i] != ')') return false;
            ++i;
            return ws(), true;
        }
        return false;
    }
    bool expr() {
        if (!term()) return false;
        while (i < s.size() && std::string("-+*/").find(s[i]) != std::string::npos) {
            ++i;
            if (!term()) return false;
        }
        return true;
    }
    // One line at a time: the `ws` after a term may swallow the line's "\n"; the grammar then needs
    // another "\n", so this backtracks over the trailing whitespace as the grammar's automaton does.
    bool valid() {
        // Every way the text splits into `expr = ws term \n` lines: a greedy pass with retries.
        return parse_from(0, 0);
    }
    bool parse_from(size_t at, int lines) {
        if (at == s.size()) return lines > 0;
        for (size_t nl = at; nl < s.size(); ++nl) {
            if (s[nl] != '\n') continue;
            Arith line{s.substr(at, nl - at)};
            if (line.expr() && line.i < line.s.size() && line.s[line.i] == '=') {
                ++line.i;
                line.ws();
                if (line.term() && line.i == line.s.size() && parse_from(nl + 1, lines + 1)) return true;
            }
        }
        return false;
    }
};

}  // namespace

TEST_CASE("grammar gbnf: errors name the line and column") {
    CHECK(where_of("root ::= \"a\"\nroot ::= \"b\"\n") == "line 2, column 1: rule 'root' is defined twice");
    CHECK(where_of("root ::= foo\n") == "line 1, column 10: rule 'foo' is used but never defined");
    CHECK(where_of("item ::= \"a\"\n") == "line 1, column 1: the grammar has no 'root' rule");
    CHECK(where_of("root ::= \"abc\n") == "line 1, column 14: a newline inside a literal (write \\n)");
    CHECK(where_of("root ::= [a-\n") == "line 1, column 13: unterminated character class");
    CHECK(where_of("root ::= (\"a\"\n") == "line 2, column 1: expected ')'");
    CHECK(where_of("root = \"a\"\n") == "line 1, column 6: expected '::=' after the rule name 'root'");
    CHECK(where_of("root ::= \"a\"{3,1}\n") == "line 1, column 18: a repetition's upper bound is below its lower bound");
    CHECK(where_of("root ::= [z-a]\n") == "line 1, column 14: a character range runs backwards");
    CHECK(where_of("root ::= \"a\" <think>\n") == "line 1, column 14: token references (<...>) are not supported");
    CHECK(where_of("root ::= \"\\x4\"\n") == "line 1, column 14: expected 2 hex digits");
}

TEST_CASE("grammar gbnf: what cannot compile is refused by rule") {
    auto message = [](const char* text) {
        try {
            compile_bytes(gbnf_grammar(text));
        } catch (const GrammarError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK(message("root ::= root \"a\" | \"b\"\n") ==
          "rule 'root' is left-recursive (it can reach itself before reading a character); rewrite it with repetition");
    CHECK(message("root ::= x\nx ::= \"a\" x\n") == "the grammar matches nothing: no text satisfies it");
    CHECK(message("root ::= [^\\x00-\\U0010FFFF]\n") == "the grammar matches nothing: no text satisfies it");
}

TEST_CASE("grammar gbnf: llama.cpp's json grammar") {
    auto c = compile_bytes(gbnf_grammar(kJson));
    for (const char* ok : {"{}", "{\"a\": 1}", "{\"a\":[1, 2.5e3, \"x\\n\", true, null, {}]}", "{\"k\": {\"n\": -0.5}} ",
                           "{\n  \"a\": \"\xC3\xA9\xE2\x82\xAC\"\n}"})
        CHECK(matches(c, ok));
    for (const char* bad : {"", "[]", "{\"a\" 1}", "{\"a\": 01}", "{\"a\": tru}", "{'a': 1}", "{\"a\": \"\x01\"}", "{\"a\": 1,}", "{} {}"})
        CHECK_FALSE(matches(c, bad));
}

TEST_CASE("grammar gbnf: llama.cpp's arithmetic grammar against a recursive-descent check") {
    auto c = compile_bytes(gbnf_grammar(kArithmetic));
    for (const char* ok : {"1+2=3\n", "a_1 *(b -2)= x\n", "( x )=1\n1=1\n"}) {
        CHECK(matches(c, ok));
        CHECK(Arith{ok}.valid());
    }
    for (const char* bad : {"1+2=3", "+1=2\n", "a=(b\n", "A=1\n", "1==2\n"}) {
        CHECK_FALSE(matches(c, bad));
        CHECK_FALSE(Arith{bad}.valid());
    }
    // Random texts drawn from the masks over Qwen3's vocabulary, each checked independently
    // (mutation: dropping `*` from the class in expr's repetition makes the checker refuse
    // drawn texts with '*'... the other way: allowing '%' in the grammar is caught here).
    auto q = CompiledGrammar::compile(gbnf_grammar(kArithmetic), vocab("qwen3"));
    std::mt19937 rng(7);
    int ended = 0;
    for (int i = 0; i < 40; ++i) {
        const Drawn d = draw(q, rng, 200, 0.5);
        if (!d.ended) continue;
        ++ended;
        INFO(d.text);
        CHECK(Arith{d.text}.valid());
    }
    CHECK(ended > 5);
}

TEST_CASE("grammar gbnf: llama.cpp's list grammar") {
    auto c = compile_bytes(gbnf_grammar(kList));
    CHECK(matches(c, "- milk\n- eggs\n"));
    CHECK(matches(c, "- caf\xC3\xA9\n"));
    CHECK_FALSE(matches(c, "- milk"));
    CHECK_FALSE(matches(c, "-milk\n"));
    CHECK_FALSE(matches(c, "- a\rb\n"));
    CHECK_FALSE(matches(c, "- a\xE2\x80\xA8 b\n"));  // U+2028
    auto q = CompiledGrammar::compile(gbnf_grammar(kList), vocab("llama3"));
    std::mt19937 rng(3);
    const std::regex line("(- [^\\r\\n\\x0b\\x0c]+\\n)+");
    for (int i = 0; i < 30; ++i) {
        const Drawn d = draw(q, rng, 40, 0.4);
        if (!d.ended) continue;
        INFO(d.text);
        CHECK(std::regex_match(d.text, line));
    }
}

TEST_CASE("grammar gbnf: drawn from llama.cpp's json grammar over real vocabularies parses as JSON") {
    for (const char* name : {"qwen3", "llama3", "mistral"}) {
        auto c = CompiledGrammar::compile(gbnf_grammar(kJson), vocab(name));
        std::mt19937 rng(11);
        int parsed = 0;
        for (int i = 0; i < 40; ++i) {
            const Drawn d = draw(c, rng, 80, 0.6);
            if (!d.ended) continue;
            INFO(name << ": " << d.text);
            // nlohmann refuses numbers past a double's range, which the grammar allows (json.gbnf's
            // exponents have up to 16 digits): exponents are cut before the syntax check
            const std::string text = std::regex_replace(d.text, std::regex("([0-9])[eE][-+]?[0-9]+"), "$1e0");
            const auto j = nlohmann::json::parse(text, nullptr, false);
            CHECK(j.is_object());
            ++parsed;
        }
        CHECK(parsed > 5);
    }
}

TEST_CASE("grammar gbnf: to_gbnf prints a grammar that parses to the same language") {
    auto g = gbnf_grammar(kJson);
    const std::string printed = to_gbnf(g);
    auto again = compile_bytes(gbnf_grammar(printed));
    for (const char* s : {"{\"a\": [1, {\"b\": null}]}", "{\"a\" 1}", "{\"\\u00e9\": \"x\"}"})
        CHECK(matches(again, s) == matches(compile_bytes(g), s));
}
