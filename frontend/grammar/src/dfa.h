// dfa.h: one rule's NFA made deterministic (subset construction over bytes, with each called
// rule a symbol of its own) and minimal (Hopcroft's partition refinement, minimize.cpp), so equal
// futures share a state and the token tables are computed once for them.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "nfa.h"

namespace radiance::grammar {

struct Dfa {
    struct Range {
        uint8_t lo, hi;
        int32_t to;
    };
    struct State {
        std::vector<Range> bytes;                        // sorted, disjoint
        std::vector<std::pair<int32_t, int32_t>> calls;  // (kept rule, return state), sorted
        bool accepting = false;
    };
    std::vector<State> states;  // states[0] is the start
};

// Throws GrammarError past max_states.
Dfa determinize(const Nfa& nfa, size_t max_states, const std::string& rule_name);
// O(m log n) in the m transitions: a chain of 60,000 states (x{60000}) minimises in milliseconds
// (Moore's refinement, used before, took one pass over every state per link of such a chain).
Dfa minimize(const Dfa& dfa);

// Byte classes over DFAs: bytes that no transition of any of them tells apart share a class.
// Fills cls[b] (classes numbered from 0 in byte order) and returns how many there are.
int32_t byte_classes(const std::vector<const Dfa*>& dfas, std::array<int32_t, 256>& cls);

}  // namespace radiance::grammar
