#include "nfa.h"

#include <algorithm>
#include <functional>

#include "utf8_ranges.h"

namespace radiance::grammar {

namespace {

constexpr uint64_t kSizeCap = uint64_t{1} << 40;
// Rules copied into rules, and groups in groups, at most this deep (the builders recurse).
constexpr int kMaxDepth = 1000;
// A rule used in more than one place is copied into each while its copies stay this small; a
// larger one stays a rule of its own (its tokens are then judged with the stack, which costs time
// at every token, where copies cost states to compile).
constexpr uint64_t kCopyBudget = 20000;

const Expr& expr_at(const Grammar& g, int id) {
    if (id < 0 || static_cast<size_t>(id) >= g.exprs.size()) throw GrammarError("internal: an expression id out of range");
    return g.exprs[static_cast<size_t>(id)];
}

// Rule references in an expression (each expression visited once).
void collect_refs(const Grammar& g, int id, std::vector<char>& seen, std::vector<int>& out) {
    std::vector<int> stack{id};
    while (!stack.empty()) {
        const int e = stack.back();
        stack.pop_back();
        if (seen[static_cast<size_t>(e)]) continue;
        seen[static_cast<size_t>(e)] = 1;
        const Expr& x = expr_at(g, e);
        if (x.kind == ExprKind::RuleRef) out.push_back(x.item);
        if (x.kind == ExprKind::Repeat) stack.push_back(x.item);
        for (int i : x.items) stack.push_back(i);
    }
}

}  // namespace

RulePlan plan_rules(const Grammar& g) {
    const size_t n = g.rules.size();
    if (g.root < 0 || static_cast<size_t>(g.root) >= n) throw GrammarError("the grammar has no root rule");
    std::vector<std::vector<int>> uses(n);
    std::vector<int> ref_count(n, 0);
    std::vector<char> reached(n, 0);
    std::vector<int> todo{g.root};
    reached[static_cast<size_t>(g.root)] = 1;
    while (!todo.empty()) {
        const int r = todo.back();
        todo.pop_back();
        const Rule& rule = g.rules[static_cast<size_t>(r)];
        if (rule.body < 0) throw GrammarError("rule '" + rule.name + "' is used but never defined");
        std::vector<char> seen(g.exprs.size(), 0);
        collect_refs(g, rule.body, seen, uses[static_cast<size_t>(r)]);
        for (int q : uses[static_cast<size_t>(r)]) {
            if (q < 0 || static_cast<size_t>(q) >= n) throw GrammarError("internal: a rule id out of range");
            ref_count[static_cast<size_t>(q)]++;
            if (!reached[static_cast<size_t>(q)]) {
                reached[static_cast<size_t>(q)] = 1;
                todo.push_back(q);
            }
        }
    }
    // Tarjan's strongly connected components, iteratively; components come out callees first.
    std::vector<int> index(n, -1), low(n, 0), comp(n, -1);
    std::vector<char> on_stack(n, 0);
    std::vector<int> stack, order;  // order: rules in the order their components closed
    int counter = 0, n_comp = 0;
    std::vector<char> recursive(n, 0);
    for (size_t v0 = 0; v0 < n; ++v0) {
        if (!reached[v0] || index[v0] >= 0) continue;
        std::vector<std::pair<int, size_t>> call{{static_cast<int>(v0), 0}};
        index[v0] = low[v0] = counter++;
        stack.push_back(static_cast<int>(v0));
        on_stack[v0] = 1;
        while (!call.empty()) {
            auto& [v, i] = call.back();
            const auto& out = uses[static_cast<size_t>(v)];
            if (i < out.size()) {
                const int w = out[i++];
                if (w == v) recursive[static_cast<size_t>(v)] = 1;
                if (index[static_cast<size_t>(w)] < 0) {
                    index[static_cast<size_t>(w)] = low[static_cast<size_t>(w)] = counter++;
                    stack.push_back(w);
                    on_stack[static_cast<size_t>(w)] = 1;
                    call.push_back({w, 0});
                } else if (on_stack[static_cast<size_t>(w)]) {
                    low[static_cast<size_t>(v)] = std::min(low[static_cast<size_t>(v)], index[static_cast<size_t>(w)]);
                }
                continue;
            }
            const int done = v;
            call.pop_back();
            if (!call.empty())
                low[static_cast<size_t>(call.back().first)] =
                    std::min(low[static_cast<size_t>(call.back().first)], low[static_cast<size_t>(done)]);
            if (low[static_cast<size_t>(done)] == index[static_cast<size_t>(done)]) {
                std::vector<int> members;
                int w;
                do {
                    w = stack.back();
                    stack.pop_back();
                    on_stack[static_cast<size_t>(w)] = 0;
                    comp[static_cast<size_t>(w)] = n_comp;
                    members.push_back(w);
                } while (w != done);
                if (members.size() > 1)
                    for (int m : members) recursive[static_cast<size_t>(m)] = 1;
                for (int m : members) order.push_back(m);
                ++n_comp;
            }
        }
    }
    // Callees first: each rule's copied size is known before a rule that uses it is sized.
    std::vector<char> keep(n, 0);
    keep[static_cast<size_t>(g.root)] = 1;
    for (size_t r = 0; r < n; ++r) keep[r] = keep[r] || (reached[r] && recursive[r]);
    std::vector<uint64_t> rule_size(n, 1);
    std::vector<uint64_t> memo(g.exprs.size(), 0);
    std::function<uint64_t(int, int)> size_of = [&](int id, int depth) -> uint64_t {
        if (depth > kMaxDepth) throw GrammarError("the grammar nests too deeply");
        if (memo[static_cast<size_t>(id)]) return memo[static_cast<size_t>(id)];
        const Expr& x = expr_at(g, id);
        uint64_t s = 1;
        switch (x.kind) {
        case ExprKind::Empty: s = 1; break;
        case ExprKind::Literal: s = x.text.size() + 1; break;
        case ExprKind::CharSet: s = 2 + 3 * x.ranges.size(); break;
        case ExprKind::Sequence:
        case ExprKind::Choice:
            s = 2;
            for (int i : x.items) s = std::min(kSizeCap, s + size_of(i, depth + 1));
            break;
        case ExprKind::Repeat: {
            const uint64_t copies = x.max == kUnbounded ? static_cast<uint64_t>(x.min) + 1 : static_cast<uint64_t>(std::max(x.min, x.max));
            s = std::min(kSizeCap, size_of(x.item, depth + 1) * std::max<uint64_t>(copies, 1) + 2);
            break;
        }
        case ExprKind::RuleRef: s = keep[static_cast<size_t>(x.item)] ? 2 : rule_size[static_cast<size_t>(x.item)]; break;
        }
        return memo[static_cast<size_t>(id)] = std::max<uint64_t>(s, 1);
    };
    for (int r : order) {
        if (keep[static_cast<size_t>(r)]) continue;
        std::fill(memo.begin(), memo.end(), 0);
        rule_size[static_cast<size_t>(r)] = size_of(g.rules[static_cast<size_t>(r)].body, 0);
        if (ref_count[static_cast<size_t>(r)] > 1 &&
            rule_size[static_cast<size_t>(r)] * static_cast<uint64_t>(ref_count[static_cast<size_t>(r)] - 1) > kCopyBudget)
            keep[static_cast<size_t>(r)] = 1;
    }
    RulePlan p;
    p.kept_index.assign(n, -1);
    p.kept.push_back(g.root);
    p.kept_index[static_cast<size_t>(g.root)] = 0;
    for (size_t r = 0; r < n; ++r)
        if (keep[r] && static_cast<int>(r) != g.root) {
            p.kept_index[r] = static_cast<int>(p.kept.size());
            p.kept.push_back(static_cast<int>(r));
        }
    return p;
}

namespace {

class NfaBuilder {
public:
    NfaBuilder(const Grammar& g, const RulePlan& p, size_t max_states) : g_(g), plan_(p), max_(max_states) {}

    Nfa build(int rule) {
        const int32_t start = state();
        const int32_t end = expr(g_.rules[static_cast<size_t>(rule)].body, start, 0);
        return nfa_.finish(start, end);
    }

private:
    int32_t state() {
        if (nfa_.size() >= max_)
            throw GrammarError("the grammar is too large to compile (more than " + std::to_string(max_) +
                               " automaton states; lower repetition counts or string lengths)");
        return nfa_.add();
    }
    void byte_edge(int32_t from, uint8_t lo, uint8_t hi, int32_t to) { nfa_.byte_edge(from, lo, hi, to); }
    void eps(int32_t from, int32_t to) {
        if (from != to) nfa_.eps(from, to);
    }

    // Builds expression id from state s; returns its end state.
    int32_t expr(int id, int32_t s, int depth) {
        if (depth > kMaxDepth) throw GrammarError("the grammar nests too deeply");
        const Expr& x = expr_at(g_, id);
        switch (x.kind) {
        case ExprKind::Empty: return s;
        case ExprKind::Literal: {
            int32_t cur = s;
            for (char c : x.text) {
                const int32_t t = state();
                byte_edge(cur, static_cast<uint8_t>(c), static_cast<uint8_t>(c), t);
                cur = t;
            }
            return cur;
        }
        case ExprKind::CharSet: {
            const int32_t t = state();
            std::vector<ByteSeq> seqs;
            for (const auto& r : x.ranges) utf8_sequences(r.lo, r.hi, seqs);
            for (const auto& q : seqs) {
                int32_t cur = s;
                for (int k = 0; k + 1 < q.n; ++k) {
                    const int32_t m = state();
                    byte_edge(cur, q.r[k].lo, q.r[k].hi, m);
                    cur = m;
                }
                byte_edge(cur, q.r[q.n - 1].lo, q.r[q.n - 1].hi, t);
            }
            return t;
        }
        case ExprKind::Sequence: {
            int32_t cur = s;
            for (int i : x.items) cur = expr(i, cur, depth + 1);
            return cur;
        }
        case ExprKind::Choice: {
            const int32_t t = state();
            for (int i : x.items) {
                // each branch from a fresh state: a branch's loop can never reach its siblings
                const int32_t b = state();
                eps(s, b);
                eps(expr(i, b, depth + 1), t);
            }
            return t;
        }
        case ExprKind::Repeat: {
            if (x.min < 0 || (x.max != kUnbounded && x.max < x.min)) throw GrammarError("internal: a repetition with bad bounds");
            int32_t cur = s;
            for (int i = 0; i < x.min; ++i) {
                const int32_t b = state();
                eps(cur, b);
                cur = expr(x.item, b, depth + 1);
            }
            if (x.max == kUnbounded) {
                const int32_t loop = state();
                eps(cur, loop);
                const int32_t b = state();
                eps(loop, b);
                eps(expr(x.item, b, depth + 1), loop);
                return loop;
            }
            const int32_t t = state();
            for (int i = x.min; i < x.max; ++i) {
                eps(cur, t);
                const int32_t b = state();
                eps(cur, b);
                cur = expr(x.item, b, depth + 1);
            }
            eps(cur, t);
            return t;
        }
        case ExprKind::RuleRef: {
            const int k = plan_.kept_index[static_cast<size_t>(x.item)];
            if (k < 0) return expr(g_.rules[static_cast<size_t>(x.item)].body, s, depth + 1);
            const int32_t t = state();
            nfa_.call(s, k, t);
            return t;
        }
        }
        return s;
    }

    const Grammar& g_;
    const RulePlan& plan_;
    size_t max_;
    NfaDraft nfa_;
};

}  // namespace

namespace {

// Stable counting sort of (state, edge) pairs into one state's edges after another.
template <typename T>
Nfa::Edges<T> lay_out(const std::vector<std::pair<int32_t, T>>& drafts, size_t n) {
    Nfa::Edges<T> e;
    e.begin.assign(n + 1, 0);
    for (const auto& d : drafts) ++e.begin[static_cast<size_t>(d.first) + 1];
    for (size_t i = 0; i < n; ++i) e.begin[i + 1] += e.begin[i];
    e.items.resize(drafts.size());
    std::vector<uint32_t> at(e.begin.begin(), e.begin.end() - 1);
    for (const auto& d : drafts) e.items[at[static_cast<size_t>(d.first)]++] = d.second;
    return e;
}

}  // namespace

Nfa NfaDraft::finish(int32_t start, int32_t accept) const {
    Nfa nfa;
    nfa.bytes = lay_out(bytes_, size());
    nfa.eps = lay_out(eps_, size());
    nfa.calls = lay_out(calls_, size());
    nfa.start = start;
    nfa.accept = accept;
    return nfa;
}

Nfa build_nfa(const Grammar& g, const RulePlan& plan, int k, size_t max_states) {
    return NfaBuilder(g, plan, max_states).build(plan.kept[static_cast<size_t>(k)]);
}

}  // namespace radiance::grammar
