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
            for (const int32_t* t = nfa_.eps.first(out[i]); t != nfa_.eps.last(out[i]); ++t)
                if (mark_[static_cast<size_t>(*t)] != gen_) {
                    mark_[static_cast<size_t>(*t)] = gen_;
                    out.push_back(*t);
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
    // Work is bounded as well as states: every closure costs its size, and nested repetitions
    // such as (a*b*){9999} make few states whose subsets hold most of a large NFA. 2^22 NFA states
    // over all closures take 0.2 s (3 s under ASan); the largest grammar in the tests needs 200,000,
    // a string of maxLength 10000 under 100,000.
    uint64_t work = 0;
    constexpr uint64_t kMaxWork = uint64_t{1} << 22;
    auto closure_of = [&](std::vector<int32_t> seeds) {
        std::vector<int32_t> set = closure.of(std::move(seeds));
        work += set.size();
        if (work > kMaxWork)
            throw GrammarError("rule '" + rule_name +
                               "' is too complex to compile (its automaton's states overlap too much: nested repetitions of "
                               "optional parts?)");
        return set;
    };
    id_of(closure_of({nfa.start}));
    for (size_t i = 0; i < sets.size(); ++i) {
        const std::vector<int32_t> set = sets[i];  // a copy: sets grows below
        std::vector<Nfa::Edge> edges;
        std::map<int32_t, std::vector<int32_t>> calls;
        bool accepting = false;
        for (int32_t s : set) {
            accepting |= s == nfa.accept;
            edges.insert(edges.end(), nfa.bytes.first(s), nfa.bytes.last(s));
            for (const auto* c = nfa.calls.first(s); c != nfa.calls.last(s); ++c) calls[c->rule].push_back(c->to);
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
            const int32_t t = id_of(closure_of(std::move(to)));
            if (!ranges.empty() && ranges.back().to == t && ranges.back().hi + 1 == lo)
                ranges.back().hi = static_cast<uint8_t>(hi);
            else
                ranges.push_back({static_cast<uint8_t>(lo), static_cast<uint8_t>(hi), t});
        }
        std::vector<std::pair<int32_t, int32_t>> call_edges;
        for (auto& [rule, to] : calls) call_edges.push_back({rule, id_of(closure_of(std::move(to)))});
        Dfa::State& st = d.states[i];
        st.bytes = std::move(ranges);
        st.calls = std::move(call_edges);
        st.accepting = accepting;
    }
    return d;
}

int32_t byte_classes(const std::vector<const Dfa*>& dfas, std::array<int32_t, 256>& cls) {
    std::vector<uint8_t> cut(257, 0);
    cut[0] = 1;
    for (const Dfa* d : dfas)
        for (const auto& st : d->states)
            for (const auto& r : st.bytes) cut[r.lo] = cut[r.hi + 1] = 1;
    int32_t k = -1;
    for (int b = 0; b < 256; ++b) cls[static_cast<size_t>(b)] = k += cut[static_cast<size_t>(b)];
    return k + 1;
}

}  // namespace radiance::grammar
