// token_tables.h: which tokens one automaton state takes, computed once per state and vocabulary
// by walking the vocabulary's trie through the state's rule (xgrammar's split of context-
// independent tokens, on our automaton). A token is *accepted* when the rule reads all of its
// bytes on its own; *uncertain* when on the way the rule could end or call another rule on the
// next byte (its exit bytes) and its own reading fails: the stack below decides, so the matcher
// checks those tokens with the real stack. Everything else is refused. Exits at the state itself
// (before any byte) are not counted: the matcher's state already holds those stacks.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "automaton.h"
#include "radiance/grammar/vocabulary.h"

namespace radiance::grammar {

// A set of token ids stored as the smallest of: the ids, the usable ids it leaves out, or bits.
struct TokenSet {
    enum class Kind : uint8_t { List, Complement, Bits };
    Kind kind = Kind::List;
    std::vector<uint32_t> data;
    // words = the set (write) or words |= the set (add); usable: the vocabulary's usable mask.
    void write(std::span<uint32_t> words, const std::vector<uint32_t>& usable) const;
    void add(std::span<uint32_t> words, const std::vector<uint32_t>& usable) const;
};

struct StateTokens {
    TokenSet accepted;
    std::vector<int32_t> uncertain;
};

class TokenWalker {
public:
    TokenWalker(const Automaton& a, const Vocabulary& v);
    StateTokens classify(int32_t state);

private:
    const Automaton& a_;
    const Vocabulary& v_;
    std::vector<int32_t> at_;
    std::vector<uint8_t> alt_;
    std::vector<uint32_t> bits_;
};

}  // namespace radiance::grammar
