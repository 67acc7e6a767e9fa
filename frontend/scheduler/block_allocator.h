// block_allocator.h: KV cache blocks as the front end accounts for them. The workers own the
// memory; the front end owns which block holds what, so a restarted worker needs no state back.
//
// Every block is in one of three states: held (by one request or more: a reference count),
// cached and unheld (its tokens findable in the BlockCache; evictable, least recently used
// first), or free. grow() takes free blocks first and evicts cached ones only when none are left,
// so a full cache never refuses what the pool holds. A held block is never handed out again,
// whatever the cache says, so no block is overwritten while a request reads it.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "block_cache.h"

namespace radiance::frontend {

// How far a sequence's leading blocks are accounted in the cache: its first `blocks` blocks are
// cached (shared from it or published to it), the last of them the entry `serial`.
struct CachedPrefix {
    int64_t blocks = 0;
    uint64_t serial = BlockCache::kRoot;
};

class BlockAllocator {
public:
    explicit BlockAllocator(int64_t blocks = 0, BlockCache::HashFn hash = BlockCache::default_hash);
    void reset(int64_t blocks);
    int64_t total() const { return total_; }
    // Blocks grow() can take: free ones and cached ones no request holds.
    int64_t free_count() const { return static_cast<int64_t>(free_.size()) + evictable_; }
    int64_t held_count() const { return total_ - free_count(); }
    // Cached blocks no request holds (kept for later requests until evicted).
    int64_t evictable_count() const { return evictable_; }
    int64_t references(int32_t block) const { return refs_[static_cast<size_t>(block)]; }
    bool cached(int32_t block) const { return cache_.contains(block); }

    // Grows `owned` to `need` blocks; false (and nothing taken) when there are not enough.
    bool grow(std::vector<int32_t>& owned, int64_t need);
    // Drops `owned`'s references, last block first, so a sequence's tail is evicted before its head.
    void release(std::vector<int32_t>& owned);

    // Prefix caching. `tokens` is the sequence, `hashes` its blocks' chain hashes (at least
    // `max_blocks` of them), `scope` what else keys its first block.
    uint64_t hash(uint64_t parent_hash, std::span<const int32_t> tokens, std::string_view scope) const {
        return cache_.hash(parent_hash, tokens, scope);
    }
    // Takes a reference on each cached block continuing `at` (`owned` holds at.blocks blocks), up
    // to max_blocks in all; returns how many it added.
    int64_t share_cached(std::vector<int32_t>& owned, CachedPrefix& at, std::span<const int32_t> tokens, std::span<const uint64_t> hashes,
                         std::string_view scope, int64_t max_blocks, int block_size);
    // Makes `owned`'s blocks from at.blocks up to `full` (computed, never written again) findable.
    void publish(const std::vector<int32_t>& owned, CachedPrefix& at, std::span<const int32_t> tokens, std::span<const uint64_t> hashes,
                 std::string_view scope, int64_t full, int block_size);
    // Forgets every cached block (the workers' KV behind them is gone).
    void forget_cached();

private:
    int32_t take();  // a free block, else the least recently used cached one (evicted)
    void lru_unlink(int32_t b);
    void lru_push_newest(int32_t b);

    int64_t total_ = 0;
    std::vector<int32_t> free_;
    std::vector<int32_t> refs_;
    BlockCache cache_;
    // Cached blocks no request holds, oldest first: a doubly linked list through prev_/next_ whose
    // sentinel is index total_ (no allocation as blocks come and go).
    std::vector<int32_t> prev_, next_;
    int64_t evictable_ = 0;
};

}  // namespace radiance::frontend
