// matcher.h: a grammar compiled for one vocabulary, and the per-request matcher that says which
// tokens may come next.
//
// CompiledGrammar is immutable once built (the cache of masks it keeps for states met before is
// locked) and shared by every request with the same grammar; compile() costs milliseconds (the
// automaton, then each state's token tables), so callers cache it (grammar_cache.h). A Matcher
// is one generation's position in the grammar; it is not thread-safe (one request, one thread at
// a time). Its calls throw GrammarError for a grammar so ambiguous that too many parses stay
// alive at once (bounded work per token, whatever the grammar).
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "radiance/grammar/grammar.h"
#include "radiance/grammar/vocabulary.h"

namespace radiance::grammar {

struct CompiledStats {
    size_t states = 0, rules = 0;
    double automaton_ms = 0, tokens_ms = 0;
};

class CompiledGrammar {
public:
    // Throws GrammarError for a grammar that does not compile, matches nothing, or whose first
    // token no token of the vocabulary can give.
    static std::shared_ptr<const CompiledGrammar> compile(const Grammar& g, std::shared_ptr<const Vocabulary> vocab);
    ~CompiledGrammar();
    const Vocabulary& vocabulary() const;
    CompiledStats stats() const;

    struct Impl;
    const Impl& impl() const { return *impl_; }

private:
    CompiledGrammar();
    std::unique_ptr<Impl> impl_;
};

class Matcher {
public:
    explicit Matcher(std::shared_ptr<const CompiledGrammar> grammar);
    ~Matcher();
    Matcher(const Matcher&);
    Matcher& operator=(const Matcher&) = delete;

    // The tokens that may come next (end-of-sequence tokens are the caller's: see can_end()):
    // `words` has vocabulary().words() entries, bit t of word t / 32 for token t.
    void fill_mask(std::span<uint32_t> words);
    // Advances by a token (false, and no change, for a token the grammar refuses).
    bool accept_token(int32_t id);
    // Advances by raw bytes (tests and tools; false and no change when refused).
    bool accept_bytes(std::string_view bytes);
    // What was read is a complete match (an end-of-sequence token may come).
    bool can_end() const;
    // Nothing can follow: the match is complete and no byte may come.
    bool finished() const;

private:
    struct State;
    std::shared_ptr<const CompiledGrammar> g_;
    std::unique_ptr<State> st_;
};

}  // namespace radiance::grammar
