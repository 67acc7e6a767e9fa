#include "block_cache.h"

#include <algorithm>
#include <random>

namespace radiance::frontend {

namespace {

// SplitMix64's finaliser.
uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

const uint64_t kProcessKey = mix(std::random_device{}() * 0x9E3779B97F4A7C15ull ^ std::random_device{}());

}  // namespace

uint64_t BlockCache::default_hash(uint64_t parent, std::span<const int32_t> tokens, std::string_view scope) {
    uint64_t h = mix(parent ^ kProcessKey);
    for (int32_t t : tokens) h = mix(h ^ (static_cast<uint64_t>(static_cast<uint32_t>(t)) + 0x9E3779B97F4A7C15ull));
    h = mix(h ^ scope.size());
    for (unsigned char c : scope) h = mix(h ^ c);
    return h;
}

void BlockCache::reset(int64_t blocks) {
    entries_.assign(static_cast<size_t>(blocks), Entry{});
    by_hash_.clear();
}

bool BlockCache::same(const Entry& e, uint64_t parent_serial, std::span<const int32_t> tokens, std::string_view scope) const {
    return e.parent == parent_serial && std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end()) &&
           (parent_serial != kRoot || e.scope == scope);
}

BlockCache::Hit BlockCache::find(uint64_t hash, uint64_t parent_serial, std::span<const int32_t> tokens, std::string_view scope) const {
    auto [lo, hi] = by_hash_.equal_range(hash);
    for (auto it = lo; it != hi; ++it) {
        const Entry& e = entries_[static_cast<size_t>(it->second)];
        if (same(e, parent_serial, tokens, scope)) return {it->second, e.serial};
    }
    return {};
}

BlockCache::Hit BlockCache::insert(int32_t block, uint64_t hash, uint64_t parent_serial, std::span<const int32_t> tokens,
                                   std::string_view scope) {
    if (Hit old = find(hash, parent_serial, tokens, scope); old.block >= 0) return old;
    erase(block);
    Entry& e = entries_[static_cast<size_t>(block)];
    e.serial = next_serial_++;
    e.hash = hash;
    e.parent = parent_serial;
    e.tokens.assign(tokens.begin(), tokens.end());
    e.scope = parent_serial == kRoot ? std::string(scope) : std::string();
    by_hash_.emplace(hash, block);
    return {block, e.serial};
}

void BlockCache::erase(int32_t block) {
    Entry& e = entries_[static_cast<size_t>(block)];
    if (e.serial == kRoot) return;
    auto [lo, hi] = by_hash_.equal_range(e.hash);
    for (auto it = lo; it != hi; ++it)
        if (it->second == block) {
            by_hash_.erase(it);
            break;
        }
    e.serial = kRoot;
}

}  // namespace radiance::frontend
