#include "dfa.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "radiance/grammar/grammar.h"

namespace radiance::grammar {

namespace {

std::string key_of(const std::vector<int32_t>& v) { return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4); }

class Closure {
public:
    explicit Closure(const Nfa& n) : nfa_(n), mark_(n.size(), 0) {}
    // The ε-closure of `seeds`, sorted.
    std::vector<int32_t> of(std::vector<int32_t> seeds) {
        ++gen_;
        std::vector<int32_t> out;
        for (int32_t s : seeds)
            if (mark_[static_cast<size_t>(s)] != gen_) {
                mark_[static_cast<size_t>(s)] = gen_;
                out.push_back(s);
            }
        for (size_t i = 0; i < out.size(); ++i)
            for (int32_t t : nfa_.eps[static_cast<size_t>(out[i])])
                if (mark_[static_cast<size_t>(t)] != gen_) {
                    mark_[static_cast<size_t>(t)] = gen_;
                    out.push_back(t);
                }
        std::sort(out.begin(), out.end());
        return out;
    }

private:
    const Nfa& nfa_;
    std::vector<uint32_t> mark_;
    uint32_t gen_ = 0;
};

}  // namespace

Dfa determinize(const Nfa& nfa, size_t max_states, const std::string& rule_name) {
    Closure closure(nfa);
    Dfa d;
    std::unordered_map<std::string, int32_t> ids;
    std::vector<std::vector<int32_t>> sets;
    auto id_of = [&](std::vector<int32_t> set) -> int32_t {
        std::string k = key_of(set);
        auto it = ids.find(k);
        if (it != ids.end()) return it->second;
        if (sets.size() >= max_states)
            throw GrammarError("rule '" + rule_name + "' needs more than " + std::to_string(max_states) +
                               " automaton states (a pattern whose matches cannot be told apart early, or very long bounded repetitions)");
        const auto id = static_cast<int32_t>(sets.size());
        ids.emplace(std::move(k), id);
        sets.push_back(std::move(set));
        d.states.emplace_back();
        return id;
    };
    id_of(closure.of({nfa.start}));
    // Work is bounded as well as states: subsets of a large NFA cost their size each.
    uint64_t work = 0;
    constexpr uint64_t kMaxWork = uint64_t{1} << 26;
    for (size_t i = 0; i < sets.size(); ++i) {
        const std::vector<int32_t> set = sets[i];  // a copy: sets grows below
        work += set.size();
        if (work > kMaxWork)
            throw GrammarError("rule '" + rule_name + "' is too complex to compile (its automaton's states overlap too much)");
        std::vector<Nfa::Edge> edges;
        std::map<int32_t, std::vector<int32_t>> calls;
        bool accepting = false;
        for (int32_t s : set) {
            accepting |= s == nfa.accept;
            for (const auto& e : nfa.bytes[static_cast<size_t>(s)]) edges.push_back(e);
            for (const auto& c : nfa.calls[static_cast<size_t>(s)]) calls[c.rule].push_back(c.to);
        }
        // Elementary byte intervals: every edge either covers one entirely or misses it.
        std::vector<int> cuts;
        for (const auto& e : edges) {
            cuts.push_back(e.lo);
            cuts.push_back(e.hi + 1);
        }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        std::vector<Dfa::Range> ranges;
        for (size_t c = 0; c + 1 < cuts.size(); ++c) {
            const int lo = cuts[c], hi = cuts[c + 1] - 1;
            std::vector<int32_t> to;
            for (const auto& e : edges)
                if (e.lo <= lo && hi <= e.hi) to.push_back(e.to);
            if (to.empty()) continue;
            const int32_t t = id_of(closure.of(std::move(to)));
            if (!ranges.empty() && ranges.back().to == t && ranges.back().hi + 1 == lo)
                ranges.back().hi = static_cast<uint8_t>(hi);
            else
                ranges.push_back({static_cast<uint8_t>(lo), static_cast<uint8_t>(hi), t});
        }
        std::vector<std::pair<int32_t, int32_t>> call_edges;
        for (auto& [rule, to] : calls) call_edges.push_back({rule, id_of(closure.of(std::move(to)))});
        Dfa::State& st = d.states[i];
        st.bytes = std::move(ranges);
        st.calls = std::move(call_edges);
        st.accepting = accepting;
    }
    return d;
}

Dfa minimize(const Dfa& d) {
    const size_t n = d.states.size();
    std::vector<int32_t> cls(n);
    for (size_t s = 0; s < n; ++s) cls[s] = d.states[s].accepting ? 1 : 0;
    size_t n_cls = 0;
    std::vector<int32_t> sig;
    for (;;) {
        std::unordered_map<std::string, int32_t> ids;
        std::vector<int32_t> next(n);
        for (size_t s = 0; s < n; ++s) {
            const auto& st = d.states[s];
            sig.clear();
            sig.push_back(cls[s]);
            // byte ranges by target class, adjacent equal ones merged, so equivalent states that
            // split a range differently still compare equal
            for (const auto& r : st.bytes) {
                const int32_t c = cls[static_cast<size_t>(r.to)];
                if (sig.size() >= 4 && sig[sig.size() - 1] == c && sig[sig.size() - 2] + 1 == r.lo) {
                    sig[sig.size() - 2] = r.hi;
                } else {
                    sig.push_back(-1);
                    sig.push_back(r.lo);
                    sig.push_back(r.hi);
                    sig.push_back(c);
                }
            }
            sig.push_back(-2);
            for (const auto& [rule, to] : st.calls) {
                sig.push_back(rule);
                sig.push_back(cls[static_cast<size_t>(to)]);
            }
            auto [it, fresh] = ids.emplace(key_of(sig), static_cast<int32_t>(ids.size()));
            next[s] = it->second;
        }
        const size_t count = ids.size();
        cls.swap(next);
        if (count == n_cls) break;
        n_cls = count;
    }
    // Renumber so the start's class is 0, then in first-seen order.
    std::vector<int32_t> order(n_cls, -1);
    int32_t k = 0;
    order[static_cast<size_t>(cls[0])] = k++;
    for (size_t s = 0; s < n; ++s)
        if (order[static_cast<size_t>(cls[s])] < 0) order[static_cast<size_t>(cls[s])] = k++;
    Dfa m;
    m.states.resize(n_cls);
    std::vector<char> done(n_cls, 0);
    for (size_t s = 0; s < n; ++s) {
        const auto c = static_cast<size_t>(order[static_cast<size_t>(cls[s])]);
        if (done[c]) continue;
        done[c] = 1;
        Dfa::State st;
        st.accepting = d.states[s].accepting;
        for (const auto& r : d.states[s].bytes) {
            const int32_t t = order[static_cast<size_t>(cls[static_cast<size_t>(r.to)])];
            if (!st.bytes.empty() && st.bytes.back().to == t && st.bytes.back().hi + 1 == r.lo)
                st.bytes.back().hi = r.hi;
            else
                st.bytes.push_back({r.lo, r.hi, t});
        }
        for (const auto& [rule, to] : d.states[s].calls)
            st.calls.push_back({rule, order[static_cast<size_t>(cls[static_cast<size_t>(to)])]});
        m.states[c] = std::move(st);
    }
    return m;
}

}  // namespace radiance::grammar
