// matcher.cpp: the parser state is a set of stacks, each a top automaton state over a chain of
// return states (frames, shared and interned per matcher). After every byte the set is closed:
// calls push their callee's start, accepting tops pop to their return state, and only tops that
// can read a byte (or end the whole match) are kept. A mask is the union of the tops' accepted
// tokens, plus their uncertain tokens that a walk with the real stack accepts.
#include <algorithm>
#include <chrono>
#include <cstring>

#include "compiled_grammar.h"

namespace radiance::grammar {

bool CompiledGrammar::Impl::cached(const std::string& key, std::span<uint32_t> out) const {
    std::lock_guard lk(mu);
    auto it = cache.find(key);
    if (it == cache.end()) return false;
    std::memcpy(out.data(), it->second.mask.data(), out.size() * 4);
    lru.splice(lru.begin(), lru, it->second.at);
    return true;
}

void CompiledGrammar::Impl::remember(const std::string& key, std::span<const uint32_t> mask) const {
    std::lock_guard lk(mu);
    if (cache.count(key)) return;
    if (cache.size() >= kCacheEntries) {
        cache.erase(lru.back());
        lru.pop_back();
    }
    lru.push_front(key);
    cache.emplace(key, Entry{std::vector<uint32_t>(mask.begin(), mask.end()), lru.begin()});
}

CompiledGrammar::CompiledGrammar() : impl_(std::make_unique<Impl>()) {}
CompiledGrammar::~CompiledGrammar() = default;
const Vocabulary& CompiledGrammar::vocabulary() const { return *impl_->vocab; }
CompiledStats CompiledGrammar::stats() const { return impl_->stats; }

std::shared_ptr<const CompiledGrammar> CompiledGrammar::compile(const Grammar& g, std::shared_ptr<const Vocabulary> vocab) {
    using Clock = std::chrono::steady_clock;
    auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::shared_ptr<CompiledGrammar> c(new CompiledGrammar());
    Impl& m = *c->impl_;
    const auto t0 = Clock::now();
    m.a = build_automaton(g);
    const auto t1 = Clock::now();
    m.vocab = std::move(vocab);
    TokenWalker walker(m.a, *m.vocab);
    m.tokens.resize(m.a.n_states());
    for (size_t s = 0; s < m.a.n_states(); ++s) m.tokens[s] = walker.classify(static_cast<int32_t>(s));
    m.stats = {m.a.n_states(), m.a.rule_start.size(), ms(t1 - t0), ms(Clock::now() - t1)};
    // The first token: a grammar the vocabulary cannot start would only ever end at once.
    Matcher first(c);
    std::vector<uint32_t> mask(m.vocab->words());
    first.fill_mask(mask);
    if (!first.can_end() && std::all_of(mask.begin(), mask.end(), [](uint32_t w) { return w == 0; }))
        throw GrammarError("no token of the model's vocabulary can begin text this grammar accepts");
    return c;
}

struct Matcher::State {
    static constexpr size_t kMaxStacks = 512;
    struct Frame {
        int32_t ret, parent;
    };
    struct Stack {
        int32_t s, f;
        friend bool operator==(const Stack&, const Stack&) = default;
    };
    std::vector<Frame> frames;
    std::unordered_map<uint64_t, int32_t> frame_ids;
    std::vector<Stack> stacks;
    std::vector<Stack> work, scratch;
    std::vector<Stack> seen;

    int32_t frame(int32_t ret, int32_t parent) {
        const uint64_t k = (static_cast<uint64_t>(static_cast<uint32_t>(ret)) << 32) | static_cast<uint32_t>(parent);
        auto [it, fresh] = frame_ids.emplace(k, static_cast<int32_t>(frames.size()));
        if (fresh) frames.push_back({ret, parent});
        return it->second;
    }

    // `in` closed under calls and pops into `out`, keeping the tops that can read a byte or end.
    void close(const Automaton& a, const std::vector<Stack>& in, std::vector<Stack>& out) {
        out.clear();
        seen.clear();
        work.assign(in.begin(), in.end());
        while (!work.empty()) {
            const Stack x = work.back();
            work.pop_back();
            if (std::find(seen.begin(), seen.end(), x) != seen.end()) continue;
            // An ambiguous grammar can keep ever more parses alive; past this many the request
            // is refused rather than let one request's cost grow without bound.
            if (seen.size() >= kMaxStacks)
                throw GrammarError("the grammar is too ambiguous: more than " + std::to_string(kMaxStacks) + " parses are alive at once");
            seen.push_back(x);
            if (a.has_bytes[x.s] || (a.accepting[x.s] && x.f < 0)) out.push_back(x);
            for (uint32_t i = a.call_begin[x.s]; i < a.call_begin[x.s + 1]; ++i) {
                const auto& c = a.calls[i];
                work.push_back({a.rule_start[c.rule], a.pure_final[c.ret] ? x.f : frame(c.ret, x.f)});
            }
            if (a.accepting[x.s] && x.f >= 0) work.push_back({frames[x.f].ret, frames[x.f].parent});
        }
        std::sort(out.begin(), out.end(), [](const Stack& p, const Stack& q) { return p.s < q.s || (p.s == q.s && p.f < q.f); });
        out.erase(std::unique(out.begin(), out.end()), out.end());
    }

    // One byte from `from` into `to` (closed); false when no stack takes it.
    bool step(const Automaton& a, const std::vector<Stack>& from, uint8_t b, std::vector<Stack>& to) {
        scratch.clear();
        for (const Stack& x : from)
            if (int32_t t = a.step(x.s, b); t >= 0) scratch.push_back({t, x.f});
        if (scratch.empty()) return false;
        std::vector<Stack> tmp;
        close(a, scratch, tmp);
        to.swap(tmp);
        return !to.empty();
    }

    bool walk(const Automaton& a, std::vector<Stack> cur, std::string_view bytes, std::vector<Stack>* result) {
        std::vector<Stack> nxt;
        for (char c : bytes) {
            if (!step(a, cur, static_cast<uint8_t>(c), nxt)) return false;
            cur.swap(nxt);
        }
        if (result) result->swap(cur);
        return true;
    }

    // The stacks' contents as a cache key: each top and its return states down to the bottom.
    std::string key() const {
        std::string k;
        auto put = [&](int32_t v) { k.append(reinterpret_cast<const char*>(&v), 4); };
        for (const Stack& x : stacks) {
            put(x.s);
            for (int32_t f = x.f; f >= 0; f = frames[f].parent) put(frames[f].ret);
            put(-1);
        }
        return k;
    }
};

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> g) : g_(std::move(g)), st_(std::make_unique<State>()) {
    const Automaton& a = g_->impl().a;
    st_->close(a, {{a.rule_start[0], -1}}, st_->stacks);
}

Matcher::~Matcher() = default;
Matcher::Matcher(const Matcher& o) : g_(o.g_), st_(std::make_unique<State>(*o.st_)) {}

void Matcher::fill_mask(std::span<uint32_t> words) {
    const auto& m = g_->impl();
    const auto& usable = m.vocab->usable_mask();
    bool needs_stack = false;
    for (const auto& x : st_->stacks) needs_stack |= !m.tokens[x.s].uncertain.empty();
    if (!needs_stack) {
        if (st_->stacks.size() == 1) return m.tokens[st_->stacks[0].s].accepted.write(words, usable);
        std::memset(words.data(), 0, words.size() * 4);
        for (const auto& x : st_->stacks) m.tokens[x.s].accepted.add(words, usable);
        return;
    }
    const std::string key = st_->key();
    if (m.cached(key, words)) return;
    std::memset(words.data(), 0, words.size() * 4);
    for (const auto& x : st_->stacks) m.tokens[x.s].accepted.add(words, usable);
    for (const auto& x : st_->stacks) {
        const auto& unsure = m.tokens[x.s].uncertain;
        if (unsure.empty()) continue;
        for (int32_t id : unsure) {
            if ((words[static_cast<uint32_t>(id) >> 5] >> (id & 31)) & 1) continue;
            const std::string_view b = m.vocab->bytes(id);
            // the first byte from this top alone: its own calls and pops are other stacks of the set
            const int32_t t = m.a.step(x.s, static_cast<uint8_t>(b[0]));
            if (t < 0) continue;
            std::vector<State::Stack> cur;
            st_->close(m.a, {{t, x.f}}, cur);
            if (!cur.empty() && st_->walk(m.a, std::move(cur), b.substr(1), nullptr))
                words[static_cast<uint32_t>(id) >> 5] |= 1u << (id & 31);
        }
    }
    m.remember(key, words);
}

bool Matcher::accept_bytes(std::string_view bytes) {
    std::vector<State::Stack> out;
    if (!st_->walk(g_->impl().a, st_->stacks, bytes, &out)) return false;
    st_->stacks.swap(out);
    return true;
}

bool Matcher::accept_token(int32_t id) {
    if (!g_->vocabulary().usable(id)) return false;
    return accept_bytes(g_->vocabulary().bytes(id));
}

bool Matcher::can_end() const {
    const Automaton& a = g_->impl().a;
    for (const auto& x : st_->stacks)
        if (x.f < 0 && a.accepting[x.s]) return true;
    return false;
}

bool Matcher::finished() const {
    const Automaton& a = g_->impl().a;
    for (const auto& x : st_->stacks)
        if (a.has_bytes[x.s]) return false;
    return can_end();
}

}  // namespace radiance::grammar
