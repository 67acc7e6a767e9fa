// automaton.h: a grammar as a byte-level pushdown automaton. Each rule that must stay a rule (the
// root, rules on a recursion cycle, large rules used in many places) is a minimal DFA over bytes
// whose states may also call another such rule (push a return state); every other rule is copied
// into the rules that use it, so a grammar without recursion (most JSON schemas) is one DFA.
// States of all rules share one numbering and one transition table over byte classes.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "radiance/grammar/grammar.h"

namespace radiance::grammar {

struct ByteSet {
    uint64_t w[4] = {0, 0, 0, 0};
    bool has(uint8_t b) const { return (w[b >> 6] >> (b & 63)) & 1; }
    void set(uint8_t b) { w[b >> 6] |= uint64_t{1} << (b & 63); }
    bool merge(const ByteSet& o) {  // true when something was added
        bool grew = false;
        for (int i = 0; i < 4; ++i) {
            grew |= (o.w[i] & ~w[i]) != 0;
            w[i] |= o.w[i];
        }
        return grew;
    }
    bool any() const { return (w[0] | w[1] | w[2] | w[3]) != 0; }
};

struct BuildLimits {
    size_t max_nfa_states = size_t{1} << 19;  // per rule, after copying the rules it uses
    size_t max_dfa_states = size_t{1} << 16;  // per rule
    size_t max_states = size_t{1} << 18;      // all rules together
};

struct Automaton {
    struct Call {
        int32_t rule = 0, ret = 0;
    };
    std::array<uint8_t, 256> byte_class{};
    int32_t n_classes = 1;
    std::vector<int32_t> next;  // [state * n_classes + class]: the next state, -1 when the byte is refused
    std::vector<uint8_t> accepting;
    std::vector<int32_t> rule_of;
    std::vector<uint32_t> call_begin;  // calls of state s: calls[call_begin[s], call_begin[s + 1])
    std::vector<Call> calls;
    std::vector<int32_t> rule_start;  // per automaton rule; rule 0 is the grammar's root
    std::vector<std::string> rule_name;

    // Bytes that, consumed right after state s, leave s's rule or enter a call: where a token
    // walked from another state of the rule needs the stack below to be judged.
    std::vector<ByteSet> exits;
    // Accepting with no byte and no call: a call returning here needs no frame (a tail call).
    std::vector<uint8_t> pure_final;
    std::vector<uint8_t> has_bytes;

    size_t n_states() const { return accepting.size(); }
    int32_t step(int32_t s, uint8_t b) const { return next[static_cast<size_t>(s) * n_classes + byte_class[b]]; }
    bool has_calls(int32_t s) const { return call_begin[s + 1] > call_begin[s]; }
};

// Throws GrammarError for undefined rules, left recursion, a grammar that matches nothing, or one
// past the limits.
Automaton build_automaton(const Grammar& g, const BuildLimits& limits = {});

}  // namespace radiance::grammar
