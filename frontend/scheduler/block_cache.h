// block_cache.h: which KV blocks hold which runs of tokens, so that a request can start from the
// blocks another one computed (automatic prefix caching).
//
// A full block is known by a hash chain: its hash covers its parent block's hash, its own token
// ids and, for a sequence's first block, the sequence's scope (whatever else changes the KV: a
// request's cache_salt now, an adapter id later). The hash only finds candidates. A match is
// exact: the candidate holds the same tokens, its parent is the very entry matched just before
// (entries are told apart by serial numbers never reused, so a block evicted and filled again
// is never mistaken for its old self) and, for a first block, the same scope. A colliding hash
// therefore costs a comparison, never a wrong answer.
//
// The index only: reference counts, the free list and eviction order are BlockAllocator's.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace radiance::frontend {

class BlockCache {
public:
    // hash(parent hash, the block's tokens, scope): scope is "" past a sequence's first block.
    using HashFn = std::function<uint64_t(uint64_t parent, std::span<const int32_t> tokens, std::string_view scope)>;
    // A 64-bit mix keyed per process (a client cannot aim collisions at a known key).
    static uint64_t default_hash(uint64_t parent, std::span<const int32_t> tokens, std::string_view scope);

    // The serial that stands for "no parent": the first block of a sequence.
    static constexpr uint64_t kRoot = 0;

    explicit BlockCache(HashFn hash = default_hash) : hash_(std::move(hash)) {}
    void reset(int64_t blocks);

    uint64_t hash(uint64_t parent_hash, std::span<const int32_t> tokens, std::string_view scope) const {
        return hash_(parent_hash, tokens, scope);
    }

    struct Hit {
        int32_t block = -1;
        uint64_t serial = kRoot;
    };
    // The cached block that holds `tokens` right after the entry `parent_serial` (kRoot: at the
    // start of a sequence of `scope`); block -1 when there is none.
    Hit find(uint64_t hash, uint64_t parent_serial, std::span<const int32_t> tokens, std::string_view scope) const;
    // Records that `block` holds `tokens` after `parent_serial`. When an equal entry exists already
    // (two requests computed the same block side by side) nothing changes and that entry is
    // returned: `block` stays uncached. Otherwise `block`'s new entry.
    Hit insert(int32_t block, uint64_t hash, uint64_t parent_serial, std::span<const int32_t> tokens, std::string_view scope);
    bool contains(int32_t block) const { return entries_[static_cast<size_t>(block)].serial != kRoot; }
    // Forgets what `block` holds (evicted, or the KV behind it is gone).
    void erase(int32_t block);
    int64_t size() const { return static_cast<int64_t>(by_hash_.size()); }

private:
    struct Entry {
        uint64_t serial = kRoot;  // kRoot: the block holds nothing findable
        uint64_t hash = 0;
        uint64_t parent = kRoot;
        std::vector<int32_t> tokens;
        std::string scope;  // first blocks only
    };
    bool same(const Entry& e, uint64_t parent_serial, std::span<const int32_t> tokens, std::string_view scope) const;

    HashFn hash_;
    std::vector<Entry> entries_;  // by block id
    std::unordered_multimap<uint64_t, int32_t> by_hash_;
    uint64_t next_serial_ = kRoot + 1;
};

}  // namespace radiance::frontend
