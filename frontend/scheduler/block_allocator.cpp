#include "block_allocator.h"

namespace radiance::frontend {

BlockAllocator::BlockAllocator(int64_t blocks, BlockCache::HashFn hash) : cache_(std::move(hash)) { reset(blocks); }

void BlockAllocator::reset(int64_t blocks) {
    total_ = blocks;
    free_.clear();
    // Handed out from the low ids first (the back of the vector).
    for (int64_t b = blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
    refs_.assign(static_cast<size_t>(blocks), 0);
    cache_.reset(blocks);
    const auto sentinel = static_cast<int32_t>(blocks);
    prev_.assign(static_cast<size_t>(blocks) + 1, -1);
    next_.assign(static_cast<size_t>(blocks) + 1, -1);
    prev_[static_cast<size_t>(sentinel)] = next_[static_cast<size_t>(sentinel)] = sentinel;
    evictable_ = 0;
}

void BlockAllocator::lru_unlink(int32_t b) {
    const auto i = static_cast<size_t>(b);
    next_[static_cast<size_t>(prev_[i])] = next_[i];
    prev_[static_cast<size_t>(next_[i])] = prev_[i];
    prev_[i] = next_[i] = -1;
    --evictable_;
}

void BlockAllocator::lru_push_newest(int32_t b) {
    const auto s = static_cast<size_t>(total_);
    const auto i = static_cast<size_t>(b);
    prev_[i] = prev_[s];
    next_[i] = static_cast<int32_t>(total_);
    next_[static_cast<size_t>(prev_[s])] = b;
    prev_[s] = b;
    ++evictable_;
}

int32_t BlockAllocator::take() {
    int32_t b;
    if (!free_.empty()) {
        b = free_.back();
        free_.pop_back();
    } else {
        b = next_[static_cast<size_t>(total_)];  // the oldest
        lru_unlink(b);
        cache_.erase(b);
    }
    refs_[static_cast<size_t>(b)] = 1;
    return b;
}

bool BlockAllocator::grow(std::vector<int32_t>& owned, int64_t need) {
    const int64_t more = need - static_cast<int64_t>(owned.size());
    if (more <= 0) return true;
    if (more > free_count()) return false;
    for (int64_t i = 0; i < more; ++i) owned.push_back(take());
    return true;
}

void BlockAllocator::release(std::vector<int32_t>& owned) {
    for (auto it = owned.rbegin(); it != owned.rend(); ++it) {
        const int32_t b = *it;
        if (--refs_[static_cast<size_t>(b)] > 0) continue;
        if (cache_.contains(b))
            lru_push_newest(b);
        else
            free_.push_back(b);
    }
    owned.clear();
}

int64_t BlockAllocator::share_cached(std::vector<int32_t>& owned, CachedPrefix& at, std::span<const int32_t> tokens,
                                     std::span<const uint64_t> hashes, std::string_view scope, int64_t max_blocks, int block_size) {
    int64_t added = 0;
    for (int64_t k = at.blocks; k < max_blocks; ++k) {
        const auto block_tokens = tokens.subspan(static_cast<size_t>(k * block_size), static_cast<size_t>(block_size));
        const BlockCache::Hit hit = cache_.find(hashes[static_cast<size_t>(k)], at.serial, block_tokens, k == 0 ? scope : "");
        if (hit.block < 0) break;
        if (refs_[static_cast<size_t>(hit.block)]++ == 0) lru_unlink(hit.block);
        owned.push_back(hit.block);
        at = {k + 1, hit.serial};
        ++added;
    }
    return added;
}

void BlockAllocator::publish(const std::vector<int32_t>& owned, CachedPrefix& at, std::span<const int32_t> tokens,
                             std::span<const uint64_t> hashes, std::string_view scope, int64_t full, int block_size) {
    for (int64_t k = at.blocks; k < full; ++k) {
        const auto block_tokens = tokens.subspan(static_cast<size_t>(k * block_size), static_cast<size_t>(block_size));
        const BlockCache::Hit entry =
            cache_.insert(owned[static_cast<size_t>(k)], hashes[static_cast<size_t>(k)], at.serial, block_tokens, k == 0 ? scope : "");
        at = {k + 1, entry.serial};
    }
}

void BlockAllocator::forget_cached() {
    if (cache_.size() == 0) return;  // called while a rank is down, again and again
    for (int32_t b = 0; b < static_cast<int32_t>(total_); ++b) {
        if (!cache_.contains(b)) continue;
        cache_.erase(b);
        if (refs_[static_cast<size_t>(b)] == 0) {
            lru_unlink(b);
            free_.push_back(b);
        }
    }
}

}  // namespace radiance::frontend
