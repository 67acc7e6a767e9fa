// compiled_grammar.h: CompiledGrammar's insides, shared by the matcher and the tools: the
// automaton, each state's token tables, and the cache of masks of parser states whose tokens
// needed the stack (keyed by the stacks' contents, so every request with this grammar shares it).
#pragma once
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>

#include "automaton.h"
#include "radiance/grammar/matcher.h"
#include "token_tables.h"

namespace radiance::grammar {

struct CompiledGrammar::Impl {
    Automaton a;
    std::shared_ptr<const Vocabulary> vocab;
    std::vector<StateTokens> tokens;  // per state
    CompiledStats stats;

    static constexpr size_t kCacheEntries = 512;
    mutable std::mutex mu;
    mutable std::list<std::string> lru;  // most recent first
    struct Entry {
        std::vector<uint32_t> mask;
        std::list<std::string>::iterator at;
    };
    mutable std::unordered_map<std::string, Entry> cache;
    bool cached(const std::string& key, std::span<uint32_t> out) const;
    void remember(const std::string& key, std::span<const uint32_t> mask) const;
};

}  // namespace radiance::grammar
