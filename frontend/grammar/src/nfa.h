// nfa.h: the first two steps of build_automaton. Which rules stay rules (called through the
// stack) and which are copied where they are used; then each kept rule's body as a Thompson NFA
// over bytes (character sets as UTF-8 byte-range sequences), with call edges to kept rules.
#pragma once
#include <cstdint>
#include <utility>
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
    // One state's edges of one kind, in the order they were added.
    template <typename T>
    struct Edges {
        std::vector<uint32_t> begin{0};  // per state, and one past the last
        std::vector<T> items;
        const T* first(int32_t s) const { return items.data() + begin[static_cast<size_t>(s)]; }
        const T* last(int32_t s) const { return items.data() + begin[static_cast<size_t>(s) + 1]; }
    };
    // Flat tables, not a vector per state: large NFAs (a string of maxLength 10000 is about 200,000
    // states) spent most of their build in allocations, ten times as long under the fuzzer's ASan.
    Edges<Edge> bytes;
    Edges<int32_t> eps;
    Edges<CallEdge> calls;
    int32_t start = 0, accept = 0;
    size_t size() const { return bytes.begin.size() - 1; }
};

// Collects edges in any order and lays them out by state.
class NfaDraft {
public:
    int32_t add() { return n_++; }
    size_t size() const { return static_cast<size_t>(n_); }
    void byte_edge(int32_t from, uint8_t lo, uint8_t hi, int32_t to) { bytes_.push_back({from, {lo, hi, to}}); }
    void eps(int32_t from, int32_t to) { eps_.push_back({from, to}); }
    void call(int32_t from, int32_t rule, int32_t to) { calls_.push_back({from, {rule, to}}); }
    Nfa finish(int32_t start, int32_t accept) const;

private:
    int32_t n_ = 0;
    std::vector<std::pair<int32_t, Nfa::Edge>> bytes_;
    std::vector<std::pair<int32_t, int32_t>> eps_;
    std::vector<std::pair<int32_t, Nfa::CallEdge>> calls_;
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
