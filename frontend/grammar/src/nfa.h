// nfa.h: the first two steps of build_automaton. Which rules stay rules (called through the
// stack) and which are copied where they are used; then each kept rule's body as a Thompson NFA
// over bytes (character sets as UTF-8 byte-range sequences), with call edges to kept rules.
#pragma once
#include <cstdint>
#include <vector>

#include "automaton.h"

namespace radiance::grammar {

struct Nfa {
    struct Edge {
        uint8_t lo, hi;
        int32_t to;
    };
    struct CallEdge {
        int32_t rule, to;  // rule: an index into the kept rules
    };
    std::vector<std::vector<Edge>> bytes;
    std::vector<std::vector<int32_t>> eps;
    std::vector<std::vector<CallEdge>> calls;
    int32_t start = 0, accept = 0;
    int32_t add() {
        bytes.emplace_back();
        eps.emplace_back();
        calls.emplace_back();
        return static_cast<int32_t>(bytes.size()) - 1;
    }
    size_t size() const { return bytes.size(); }
};

// The grammar's rules that become automaton rules, the root first (kept[0] == g.root); kept_index
// maps a grammar rule to its place there or -1 (copied where used). Checks that every rule used
// is defined.
struct RulePlan {
    std::vector<int> kept;
    std::vector<int> kept_index;
};
RulePlan plan_rules(const Grammar& g);

// Kept rule k's body as an NFA.
Nfa build_nfa(const Grammar& g, const RulePlan& plan, int k, size_t max_states);

}  // namespace radiance::grammar
