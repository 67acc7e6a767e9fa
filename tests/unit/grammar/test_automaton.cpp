// The automaton compiler on its own: Hopcroft's minimisation against a plain Moore refinement
// written here as the reference (the same number of states, the same language), and patterns that
// once hung the fuzzer (long chains, nested optional repetitions) compile or are refused cleanly.
// Mutations seen failing: minimize.cpp not queueing the new half of a queued block that split
// (175 checks: too few states, a wrong language), and leaving call symbols out (calls test);
// automaton.cpp's Readers::solve never requeueing a reader (26 of 30 grammar test cases).
#include <catch2/catch.hpp>
#include <map>
#include <random>

#include "automaton.h"
#include "dfa.h"
#include "grammar_test_util.h"
#include "nfa.h"

using namespace gtest;

namespace {

Dfa root_dfa(const Grammar& g) {
    const RulePlan plan = plan_rules(g);
    return determinize(build_nfa(g, plan, 0, size_t{1} << 19), size_t{1} << 16, "root");
}

// The reference: Moore's refinement by each state's whole row of (byte -> class) and calls.
size_t moore_classes(const Dfa& d) {
    const size_t n = d.states.size();
    std::vector<int> cls(n);
    for (size_t s = 0; s < n; ++s) cls[s] = d.states[s].accepting;
    for (size_t count = 0;;) {
        std::map<std::vector<int>, int> ids;
        std::vector<int> next(n);
        for (size_t s = 0; s < n; ++s) {
            std::vector<int> sig{cls[s]};
            std::vector<int> row(256, -1);
            for (const auto& r : d.states[s].bytes)
                for (int b = r.lo; b <= r.hi; ++b) row[static_cast<size_t>(b)] = cls[static_cast<size_t>(r.to)];
            sig.insert(sig.end(), row.begin(), row.end());
            for (const auto& [rule, to] : d.states[s].calls) {
                sig.push_back(1000 + rule);
                sig.push_back(cls[static_cast<size_t>(to)]);
            }
            next[s] = ids.emplace(sig, static_cast<int>(ids.size())).first->second;
        }
        cls.swap(next);
        if (ids.size() == count) return count;
        count = ids.size();
    }
}

// Whether the DFA (bytes only) accepts `text`.
bool dfa_accepts(const Dfa& d, const std::string& text) {
    int32_t s = 0;
    for (char ch : text) {
        const auto b = static_cast<uint8_t>(ch);
        int32_t t = -1;
        for (const auto& r : d.states[static_cast<size_t>(s)].bytes)
            if (r.lo <= b && b <= r.hi) t = r.to;
        if (t < 0) return false;
        s = t;
    }
    return d.states[static_cast<size_t>(s)].accepting;
}

std::string random_regex(std::mt19937& rng, int depth) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
    if (depth == 0 || pick(4) == 0) {
        static const char* atoms[] = {"a", "b", "c", "[ab]", "[^a]", "."};
        return atoms[pick(6)];
    }
    switch (pick(5)) {
    case 0: return random_regex(rng, depth - 1) + random_regex(rng, depth - 1);
    case 1: return "(" + random_regex(rng, depth - 1) + "|" + random_regex(rng, depth - 1) + ")";
    case 2: return "(" + random_regex(rng, depth - 1) + ")" + "*+?"[pick(3)];
    case 3: return "(" + random_regex(rng, depth - 1) + "){" + std::to_string(pick(3)) + "," + std::to_string(2 + pick(3)) + "}";
    default: return random_regex(rng, depth - 1) + "c" + random_regex(rng, depth - 1);
    }
}

}  // namespace

TEST_CASE("grammar automaton: minimisation matches a plain Moore refinement, state count and language") {
    std::mt19937 rng(7);
    int merged = 0;
    for (int i = 0; i < 300; ++i) {
        const std::string pattern = random_regex(rng, 4);
        INFO(pattern);
        const Dfa d = root_dfa(regex_grammar(pattern));
        const Dfa m = minimize(d);
        CHECK(m.states.size() == moore_classes(d));
        merged += m.states.size() < d.states.size();
        for (int k = 0; k < 40; ++k) {
            std::string text;
            const auto len = rng() % 9;
            for (size_t j = 0; j < len; ++j) text += "abcd"[rng() % 4];
            INFO(text);
            CHECK(dfa_accepts(m, text) == dfa_accepts(d, text));
        }
    }
    CHECK(merged > 30);  // the comparison means something: many of the DFAs were not minimal
}

TEST_CASE("grammar automaton: minimisation keeps calls to kept rules apart") {
    // "x" a and "x" b reach states that differ only by which rule they call next.
    const Grammar g = gbnf_grammar("root ::= \"x\" a \"y\" | \"z\" b \"y\" | \"w\" a \"y\"\na ::= \"(\" a \")\" | \"\"\nb ::= \"[\" b \"]\" | \"\"\n");
    const Dfa d = root_dfa(g);
    const Dfa m = minimize(d);
    CHECK(m.states.size() == moore_classes(d));
    const auto c = compile_bytes(g);
    CHECK(matches(c, "x(())y"));
    CHECK(matches(c, "z[[]]y"));
    CHECK(matches(c, "w()y"));
    CHECK_FALSE(matches(c, "x[]y"));
    CHECK_FALSE(matches(c, "z()y"));
}

TEST_CASE("grammar automaton: long chains compile, overlapping nested repetitions are refused") {
    // Each of these took minutes under the sanitized fuzzer (tests/fuzz/regressions).
    const auto chain = compile_bytes(regex_grammar("\\d{3}:{9990}"));
    CHECK(matches(chain, "123" + std::string(9990, ':')));
    CHECK_FALSE(matches(chain, "123" + std::string(9989, ':')));
    const auto bounded = compile_bytes(regex_grammar("[a-z0-9]{1,9999}"));
    CHECK(matches(bounded, std::string(9999, 'q')));
    CHECK_FALSE(matches(bounded, std::string(10000, 'q')));
    const auto grouped = compile_bytes(regex_grammar("(ab|a){5000}"));
    CHECK(matches(grouped, std::string(5000, 'a')));
    CHECK_FALSE(matches(grouped, std::string(4999, 'a')));
    const auto calls = compile_bytes(gbnf_grammar("root ::= (r \"y\"){3000}\nr ::= \"a\" r | \"b\"\n"));
    std::string text;
    for (int i = 0; i < 3000; ++i) text += "aby";
    CHECK(matches(calls, text));
    try {
        compile_bytes(regex_grammar("(a*b*){9999}"));
        FAIL("compiled");
    } catch (const GrammarError& e) {
        CHECK_THAT(e.what(), Catch::Contains("too complex to compile"));
    }
}
