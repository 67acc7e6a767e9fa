// automaton.cpp: kept rules' minimal DFAs joined into one numbering and one table over byte
// classes, then the analysis the matcher and the token tables rely on: states that can never
// finish are cut off (so generation never walks into a dead end), left recursion is refused,
// and each state's exit bytes are computed from FIRST and FOLLOW sets.
#include <algorithm>

#include "automaton.h"
#include "dfa.h"
#include "nfa.h"

namespace radiance::grammar {

namespace {

// Who reads whom in a monotone system over nodes 0..n-1, built from (reader, read) pairs.
class Readers {
public:
    explicit Readers(size_t n) : n_(n) {}
    void add(int32_t reader, int32_t read) { pairs_.push_back({read, reader}); }
    // Solves the system: `recompute(s)` re-derives node s from what it reads and says whether s
    // grew. A node is looked at again only when something it reads grew, so a chain of n links
    // settles in one sweep (a pass over every node until nothing changes needed n passes).
    template <typename F>
    void solve(F recompute) {
        std::sort(pairs_.begin(), pairs_.end());
        pairs_.erase(std::unique(pairs_.begin(), pairs_.end()), pairs_.end());
        std::vector<uint32_t> begin(n_ + 1, 0);
        for (const auto& [read, reader] : pairs_) ++begin[static_cast<size_t>(read) + 1];
        for (size_t i = 0; i < n_; ++i) begin[i + 1] += begin[i];
        std::vector<int32_t> todo;
        std::vector<uint8_t> queued(n_, 1);
        for (size_t s = n_; s-- > 0;) todo.push_back(static_cast<int32_t>(s));
        while (!todo.empty()) {
            const int32_t s = todo.back();
            todo.pop_back();
            queued[static_cast<size_t>(s)] = 0;
            if (!recompute(s)) continue;
            for (uint32_t i = begin[static_cast<size_t>(s)]; i < begin[static_cast<size_t>(s) + 1]; ++i) {
                const int32_t r = pairs_[i].second;
                if (!queued[static_cast<size_t>(r)]) {
                    queued[static_cast<size_t>(r)] = 1;
                    todo.push_back(r);
                }
            }
        }
    }

private:
    size_t n_;
    std::vector<std::pair<int32_t, int32_t>> pairs_;  // (read, reader)
};

// Readers through calls: a calling state reads the called rule's start and the return state.
Readers call_readers(const Automaton& a) {
    Readers r(a.n_states());
    for (int32_t s = 0; s < static_cast<int32_t>(a.n_states()); ++s)
        for (uint32_t i = a.call_begin[s]; i < a.call_begin[s + 1]; ++i) {
            r.add(s, a.rule_start[a.calls[i].rule]);
            r.add(s, a.calls[i].ret);
        }
    return r;
}

void analyse(Automaton& a) {
    const auto n = static_cast<int32_t>(a.n_states());
    const int32_t C = a.n_classes;
    auto bytes_of = [&](int32_t s, auto f) {
        for (int b = 0; b < 256; ++b)
            if (a.step(s, static_cast<uint8_t>(b)) >= 0) f(static_cast<uint8_t>(b));
    };
    // Productive: a state from which the rule can still finish.
    std::vector<uint8_t> prod(static_cast<size_t>(n), 0);
    {
        Readers readers = call_readers(a);
        std::vector<int32_t> added_for(static_cast<size_t>(n), -1);  // one pair per (s, t), not per class
        for (int32_t s = 0; s < n; ++s)
            for (int32_t c = 0; c < C; ++c)
                if (const int32_t t = a.next[static_cast<size_t>(s) * C + c]; t >= 0 && added_for[t] != s) {
                    added_for[t] = s;
                    readers.add(s, t);
                }
        readers.solve([&](int32_t s) {
            if (prod[s]) return false;
            bool p = a.accepting[s] != 0;
            for (int32_t c = 0; c < C && !p; ++c) {
                const int32_t t = a.next[static_cast<size_t>(s) * C + c];
                p = t >= 0 && prod[t];
            }
            for (uint32_t i = a.call_begin[s]; i < a.call_begin[s + 1] && !p; ++i)
                p = prod[a.rule_start[a.calls[i].rule]] && prod[a.calls[i].ret];
            return p && (prod[s] = 1);
        });
    }
    if (!prod[a.rule_start[0]]) throw GrammarError("the grammar matches nothing: no text satisfies it");
    // Cut what cannot finish: a byte or a call into it would strand the generation.
    for (size_t i = 0; i < a.next.size(); ++i)
        if (a.next[i] >= 0 && !prod[a.next[i]]) a.next[i] = -1;
    {
        std::vector<Automaton::Call> calls;
        std::vector<uint32_t> begin(static_cast<size_t>(n) + 1, 0);
        for (int32_t s = 0; s < n; ++s) {
            begin[s] = static_cast<uint32_t>(calls.size());
            for (uint32_t i = a.call_begin[s]; i < a.call_begin[s + 1]; ++i)
                if (prod[s] && prod[a.rule_start[a.calls[i].rule]] && prod[a.calls[i].ret]) calls.push_back(a.calls[i]);
        }
        begin[n] = static_cast<uint32_t>(calls.size());
        a.calls = std::move(calls);
        a.call_begin = std::move(begin);
    }
    a.has_bytes.assign(static_cast<size_t>(n), 0);
    for (int32_t s = 0; s < n; ++s)
        for (int32_t c = 0; c < C && !a.has_bytes[s]; ++c) a.has_bytes[s] = a.next[static_cast<size_t>(s) * C + c] >= 0;
    a.pure_final.assign(static_cast<size_t>(n), 0);
    for (int32_t s = 0; s < n; ++s) a.pure_final[s] = a.accepting[s] && !a.has_bytes[s] && !a.has_calls(s);

    // Nullable states (can finish their rule without a byte) and rules.
    const auto R = static_cast<int32_t>(a.rule_start.size());
    std::vector<uint8_t> nullable(static_cast<size_t>(n), 0);
    Readers through_calls = call_readers(a);
    through_calls.solve([&](int32_t s) {
        if (nullable[s]) return false;
        bool v = a.accepting[s] != 0;
        for (uint32_t i = a.call_begin[s]; i < a.call_begin[s + 1] && !v; ++i)
            v = nullable[a.rule_start[a.calls[i].rule]] && nullable[a.calls[i].ret];
        return v && (nullable[s] = 1);
    });
    // Left recursion: a rule reaching a call of itself without a byte would push frames forever.
    std::vector<int32_t> seen_from(static_cast<size_t>(n), -1);
    for (int32_t r = 0; r < R; ++r) {
        std::vector<int32_t> todo{a.rule_start[r]};
        while (!todo.empty()) {
            const int32_t s = todo.back();
            todo.pop_back();
            if (seen_from[s] == r) continue;
            seen_from[s] = r;
            for (uint32_t i = a.call_begin[s]; i < a.call_begin[s + 1]; ++i) {
                const auto& c = a.calls[i];
                if (c.rule == r)
                    throw GrammarError("rule '" + a.rule_name[r] +
                                       "' is left-recursive (it can reach itself before reading a character); rewrite it with repetition");
                todo.push_back(a.rule_start[c.rule]);
                if (nullable[a.rule_start[c.rule]]) todo.push_back(c.ret);
            }
        }
    }
    // FIRST: bytes a state can read next within its rule (through calls).
    std::vector<ByteSet> first(static_cast<size_t>(n));
    for (int32_t s = 0; s < n; ++s) bytes_of(s, [&](uint8_t b) { first[s].set(b); });
    through_calls.solve([&](int32_t s) {
        bool grew = false;
        for (uint32_t i = a.call_begin[s]; i < a.call_begin[s + 1]; ++i) {
            const auto& c = a.calls[i];
            grew |= first[s].merge(first[a.rule_start[c.rule]]);
            if (nullable[a.rule_start[c.rule]]) grew |= first[s].merge(first[c.ret]);
        }
        return grew;
    });
    // FOLLOW: bytes that can come right after a rule ends, wherever it is called.
    std::vector<ByteSet> follow(static_cast<size_t>(R));
    {
        std::vector<std::vector<int32_t>> returns_of(static_cast<size_t>(R));  // per called rule
        Readers readers(static_cast<size_t>(R));
        for (int32_t s = 0; s < n; ++s)
            for (uint32_t i = a.call_begin[s]; i < a.call_begin[s + 1]; ++i) {
                const auto& c = a.calls[i];
                returns_of[static_cast<size_t>(c.rule)].push_back(c.ret);
                if (nullable[c.ret]) readers.add(c.rule, a.rule_of[c.ret]);
            }
        readers.solve([&](int32_t r) {
            bool grew = false;
            for (int32_t ret : returns_of[static_cast<size_t>(r)]) {
                grew |= follow[r].merge(first[ret]);
                if (nullable[ret]) grew |= follow[r].merge(follow[a.rule_of[ret]]);
            }
            return grew;
        });
    }
    a.exits.assign(static_cast<size_t>(n), ByteSet{});
    for (int32_t s = 0; s < n; ++s) {
        if (a.accepting[s]) a.exits[s].merge(follow[a.rule_of[s]]);
        for (uint32_t i = a.call_begin[s]; i < a.call_begin[s + 1]; ++i) {
            const auto& c = a.calls[i];
            a.exits[s].merge(first[a.rule_start[c.rule]]);
            if (nullable[a.rule_start[c.rule]]) {
                a.exits[s].merge(first[c.ret]);
                if (nullable[c.ret]) a.exits[s].merge(follow[a.rule_of[s]]);
            }
        }
    }
}

}  // namespace

Automaton build_automaton(const Grammar& g, const BuildLimits& limits) {
    const RulePlan plan = plan_rules(g);
    std::vector<Dfa> dfas;
    size_t total = 0;
    for (size_t k = 0; k < plan.kept.size(); ++k) {
        const std::string& name = g.rules[static_cast<size_t>(plan.kept[k])].name;
        Nfa nfa = build_nfa(g, plan, static_cast<int>(k), limits.max_nfa_states);
        dfas.push_back(minimize(determinize(nfa, limits.max_dfa_states, name)));
        total += dfas.back().states.size();
        if (total > limits.max_states)
            throw GrammarError("the grammar is too large to compile (more than " + std::to_string(limits.max_states) +
                               " automaton states)");
    }
    Automaton a;
    // Byte classes: bytes no transition anywhere tells apart share a column.
    std::vector<const Dfa*> all;
    for (const auto& d : dfas) all.push_back(&d);
    std::array<int32_t, 256> cls{};
    a.n_classes = byte_classes(all, cls);
    for (int b = 0; b < 256; ++b) a.byte_class[b] = static_cast<uint8_t>(cls[static_cast<size_t>(b)]);
    std::vector<int32_t> offset(dfas.size());
    int32_t at = 0;
    for (size_t k = 0; k < dfas.size(); ++k) {
        offset[k] = at;
        at += static_cast<int32_t>(dfas[k].states.size());
    }
    const auto n = static_cast<size_t>(at);
    a.next.assign(n * static_cast<size_t>(a.n_classes), -1);
    a.accepting.assign(n, 0);
    a.rule_of.assign(n, 0);
    a.call_begin.assign(n + 1, 0);
    for (size_t k = 0; k < dfas.size(); ++k) {
        a.rule_start.push_back(offset[k]);
        a.rule_name.push_back(g.rules[static_cast<size_t>(plan.kept[k])].name);
        for (size_t i = 0; i < dfas[k].states.size(); ++i) {
            const auto s = static_cast<size_t>(offset[k]) + i;
            const auto& st = dfas[k].states[i];
            a.accepting[s] = st.accepting;
            a.rule_of[s] = static_cast<int32_t>(k);
            for (const auto& r : st.bytes)
                for (int b = r.lo; b <= r.hi; ++b) a.next[s * static_cast<size_t>(a.n_classes) + a.byte_class[b]] = offset[k] + r.to;
            a.call_begin[s] = static_cast<uint32_t>(a.calls.size());
            for (const auto& [rule, ret] : st.calls) a.calls.push_back({rule, offset[k] + ret});
        }
    }
    a.call_begin[n] = static_cast<uint32_t>(a.calls.size());
    analyse(a);
    return a;
}

}  // namespace radiance::grammar
