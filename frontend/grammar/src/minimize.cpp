// minimize.cpp: Hopcroft's partition refinement over a rule's DFA. Symbols are the byte classes
// no range of this DFA tells apart plus one symbol per called rule. A missing transition goes to
// an implicit dead state that is never a splitter: the partition ends stable against every real
// block, hence against all real states together, hence against the dead one (what is left of the
// whole set), which is why its predecessors (every state without some symbol) never need listing.
// Work is O(m log n) for m transitions; Moore's rounds, used before, were O(n) each and a chain of
// n states needed n of them (a regex like x{9990} spent minutes under the fuzzer).
#include <algorithm>
#include <array>

#include "dfa.h"

namespace radiance::grammar {

namespace {

// Transitions into each state, grouped by target: (symbol, source).
struct Inverse {
    std::vector<uint32_t> begin;
    std::vector<std::pair<int32_t, int32_t>> edges;
};

// The DFA's transitions as (source, symbol, target), the symbol count returned through n_symbols.
std::vector<std::array<int32_t, 3>> transitions_of(const Dfa& d, int32_t& n_symbols) {
    std::array<int32_t, 256> cls{};
    const int32_t n_bytes = byte_classes({&d}, cls);
    int32_t max_rule = -1;
    for (const auto& st : d.states)
        for (const auto& c : st.calls) max_rule = std::max(max_rule, c.first);
    n_symbols = n_bytes + max_rule + 1;
    std::vector<std::array<int32_t, 3>> out;
    for (size_t s = 0; s < d.states.size(); ++s) {
        const auto src = static_cast<int32_t>(s);
        for (const auto& r : d.states[s].bytes)
            for (int32_t c = cls[r.lo]; c <= cls[r.hi]; ++c) out.push_back({src, c, r.to});
        for (const auto& [rule, to] : d.states[s].calls) out.push_back({src, n_bytes + rule, to});
    }
    return out;
}

Inverse invert(const std::vector<std::array<int32_t, 3>>& tr, size_t n) {
    Inverse inv;
    inv.begin.assign(n + 1, 0);
    for (const auto& t : tr) ++inv.begin[static_cast<size_t>(t[2]) + 1];
    for (size_t i = 0; i < n; ++i) inv.begin[i + 1] += inv.begin[i];
    inv.edges.resize(tr.size());
    std::vector<uint32_t> at(inv.begin.begin(), inv.begin.end() - 1);
    for (const auto& t : tr) inv.edges[at[static_cast<size_t>(t[2])]++] = {t[1], t[0]};
    return inv;
}

// States laid out block by block; a block's marked states sit at its front.
class Partition {
public:
    explicit Partition(const Dfa& d) : elems_(d.states.size()), loc_(d.states.size()), blk_(d.states.size()) {
        const size_t n = d.states.size();
        size_t at = 0;
        for (int pass = 0; pass < 2; ++pass) {  // accepting states first, then the rest
            const size_t start = at;
            for (size_t s = 0; s < n; ++s)
                if (d.states[s].accepting == (pass == 0)) {
                    elems_[at] = static_cast<int32_t>(s);
                    loc_[s] = at;
                    blk_[s] = static_cast<int32_t>(first_.size());
                    ++at;
                }
            if (at > start) add_block(start, at);
        }
    }
    size_t blocks() const { return first_.size(); }
    int32_t block_of(int32_t s) const { return blk_[static_cast<size_t>(s)]; }
    std::vector<int32_t> members(int32_t b) const {
        return {elems_.begin() + static_cast<std::ptrdiff_t>(first_[static_cast<size_t>(b)]),
                elems_.begin() + static_cast<std::ptrdiff_t>(end_[static_cast<size_t>(b)])};
    }

    // Splits every block that `xs` (distinct states) cuts into the part in xs and the rest;
    // `split(old, fresh)` hears of each split.
    template <typename F>
    void refine(const std::vector<int32_t>& xs, F split) {
        touched_.clear();
        for (int32_t x : xs) {
            const auto b = static_cast<size_t>(blk_[static_cast<size_t>(x)]);
            if (mid_[b] == first_[b]) touched_.push_back(static_cast<int32_t>(b));
            const size_t p = loc_[static_cast<size_t>(x)], q = mid_[b]++;
            std::swap(elems_[p], elems_[q]);
            loc_[static_cast<size_t>(elems_[p])] = p;
            loc_[static_cast<size_t>(elems_[q])] = q;
        }
        for (int32_t b32 : touched_) {
            const auto b = static_cast<size_t>(b32);
            if (mid_[b] == end_[b]) {  // all of the block: no split
                mid_[b] = first_[b];
                continue;
            }
            const size_t f = first_[b], m = mid_[b];
            first_[b] = mid_[b] = m;
            const auto fresh = static_cast<int32_t>(first_.size());
            add_block(f, m);
            for (size_t p = f; p < m; ++p) blk_[static_cast<size_t>(elems_[p])] = fresh;
            split(b32, fresh);
        }
    }

    size_t size_of(int32_t b) const { return end_[static_cast<size_t>(b)] - first_[static_cast<size_t>(b)]; }

private:
    void add_block(size_t f, size_t e) {
        first_.push_back(f);
        mid_.push_back(f);
        end_.push_back(e);
    }
    std::vector<int32_t> elems_;
    std::vector<size_t> loc_;
    std::vector<int32_t> blk_;
    std::vector<size_t> first_, mid_, end_;
    std::vector<int32_t> touched_;
};

}  // namespace

Dfa minimize(const Dfa& d) {
    const size_t n = d.states.size();
    if (n == 0) return d;
    int32_t n_symbols = 0;
    const Inverse inv = invert(transitions_of(d, n_symbols), n);
    Partition part(d);
    std::vector<int32_t> work;
    std::vector<uint8_t> queued;
    auto enqueue = [&](int32_t b) {
        if (queued.size() <= static_cast<size_t>(b)) queued.resize(static_cast<size_t>(b) + 1, 0);
        if (!queued[static_cast<size_t>(b)]) {
            queued[static_cast<size_t>(b)] = 1;
            work.push_back(b);
        }
    };
    for (size_t b = 0; b < part.blocks(); ++b) enqueue(static_cast<int32_t>(b));
    std::vector<std::vector<int32_t>> preds(static_cast<size_t>(n_symbols));
    std::vector<int32_t> symbols_seen;
    while (!work.empty()) {
        const int32_t splitter = work.back();
        work.pop_back();
        queued[static_cast<size_t>(splitter)] = 0;
        // Predecessors of the splitter by symbol, gathered before any split moves its states.
        for (int32_t t : part.members(splitter))
            for (uint32_t i = inv.begin[static_cast<size_t>(t)]; i < inv.begin[static_cast<size_t>(t) + 1]; ++i) {
                const auto [sym, src] = inv.edges[i];
                auto& p = preds[static_cast<size_t>(sym)];
                if (p.empty()) symbols_seen.push_back(sym);
                p.push_back(src);
            }
        for (int32_t sym : symbols_seen) {
            part.refine(preds[static_cast<size_t>(sym)], [&](int32_t old, int32_t fresh) {
                // A queued block's halves both stay queued; otherwise the smaller half suffices.
                if (old < static_cast<int32_t>(queued.size()) && queued[static_cast<size_t>(old)])
                    enqueue(fresh);
                else
                    enqueue(part.size_of(fresh) <= part.size_of(old) ? fresh : old);
            });
            preds[static_cast<size_t>(sym)].clear();
        }
        symbols_seen.clear();
    }
    // Renumber so the start's block is 0, then in first-seen order.
    std::vector<int32_t> order(part.blocks(), -1);
    int32_t k = 0;
    order[static_cast<size_t>(part.block_of(0))] = k++;
    for (size_t s = 0; s < n; ++s) {
        auto& o = order[static_cast<size_t>(part.block_of(static_cast<int32_t>(s)))];
        if (o < 0) o = k++;
    }
    auto class_of = [&](int32_t s) { return order[static_cast<size_t>(part.block_of(s))]; };
    Dfa m;
    m.states.resize(part.blocks());
    std::vector<char> done(part.blocks(), 0);
    for (size_t s = 0; s < n; ++s) {
        const auto c = static_cast<size_t>(class_of(static_cast<int32_t>(s)));
        if (done[c]) continue;
        done[c] = 1;
        Dfa::State st;
        st.accepting = d.states[s].accepting;
        for (const auto& r : d.states[s].bytes) {
            const int32_t t = class_of(r.to);
            if (!st.bytes.empty() && st.bytes.back().to == t && st.bytes.back().hi + 1 == r.lo)
                st.bytes.back().hi = r.hi;
            else
                st.bytes.push_back({r.lo, r.hi, t});
        }
        for (const auto& [rule, to] : d.states[s].calls) st.calls.push_back({rule, class_of(to)});
        m.states[c] = std::move(st);
    }
    return m;
}

}  // namespace radiance::grammar
