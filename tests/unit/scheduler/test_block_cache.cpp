// Prefix caching in the block pool (block_allocator.h, block_cache.h): reference counts, eviction
// least recently used first (a sequence's tail before its head), exact matches under colliding
// hashes, held blocks never handed out, salts kept apart, forgetting everything.
//
// Mutations seen failing (2026-12-07): BlockCache::same() not comparing the parent serial ("every
// hash collides", "a stale child"); not comparing the tokens ("every hash collides"); serials
// reused per block id ("a stale child"); the scope left out of a first block's comparison (the
// colliding section of "salts"); release() freeing head first and take() evicting the newest (the
// order checks, and the scheduler's eviction test); release() freeing at any count ("a second
// sequence shares"); share_cached() not unlinking a block it takes back from the LRU list ("a
// block shared again").
#include <algorithm>
#include <numeric>
#include <set>

#include <catch2/catch.hpp>

#include "block_allocator.h"

using radiance::frontend::BlockAllocator;
using radiance::frontend::BlockCache;
using radiance::frontend::CachedPrefix;

namespace {

constexpr int kBlock = 4;

// A sequence as the scheduler holds one: its tokens, its chain hashes, its blocks.
struct Seq {
    std::vector<int32_t> tokens;
    std::vector<uint64_t> hashes;
    std::vector<int32_t> blocks;
    CachedPrefix cached;
    std::string scope;

    Seq(const BlockAllocator& a, std::vector<int32_t> t, std::string s = "") : tokens(std::move(t)), scope(std::move(s)) {
        for (size_t k = 0; k < tokens.size() / kBlock; ++k)
            hashes.push_back(a.hash(k ? hashes.back() : 0, std::span<const int32_t>(tokens).subspan(k * kBlock, kBlock), k ? "" : scope));
    }
    int64_t full() const { return static_cast<int64_t>(tokens.size()) / kBlock; }
    // Shares what the cache has, grows to every block, and publishes the full ones (a prefill).
    int64_t compute(BlockAllocator& a) {
        const int64_t shared = a.share_cached(blocks, cached, tokens, hashes, scope, full(), kBlock);
        REQUIRE(a.grow(blocks, (static_cast<int64_t>(tokens.size()) + kBlock - 1) / kBlock));
        a.publish(blocks, cached, tokens, hashes, scope, full(), kBlock);
        return shared;
    }
    int64_t share(BlockAllocator& a) { return a.share_cached(blocks, cached, tokens, hashes, scope, full(), kBlock); }
    void release(BlockAllocator& a) {
        a.release(blocks);
        cached = {};
    }
};

std::vector<int32_t> iota(int n, int from) {
    std::vector<int32_t> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), from);
    return v;
}

}  // namespace

TEST_CASE("block cache: a second sequence shares the first's full blocks, counted", "[scheduler][prefix]") {
    BlockAllocator a(16);
    Seq x(a, iota(10, 1));  // two full blocks and half of a third
    CHECK(x.compute(a) == 0);
    CHECK(a.held_count() == 3);
    Seq y(a, iota(10, 1));
    CHECK(y.share(a) == 2);
    CHECK(std::equal(y.blocks.begin(), y.blocks.end(), x.blocks.begin()));
    CHECK(a.references(x.blocks[0]) == 2);
    CHECK_FALSE(a.cached(x.blocks[2]));  // the partial block is never cached
    // Held by two: released by one, it stays held (neither free nor evictable).
    x.release(a);
    CHECK(a.references(y.blocks[0]) == 1);
    CHECK(a.evictable_count() == 0);
    CHECK(a.held_count() == 2);
    y.release(a);
    CHECK(a.held_count() == 0);
    CHECK(a.evictable_count() == 2);  // kept for later, evictable
    CHECK(a.free_count() == 16);
}

TEST_CASE("block cache: eviction is least recently used first, a sequence's tail before its head", "[scheduler][prefix]") {
    BlockAllocator a(6);
    Seq x(a, iota(8, 100)), y(a, iota(8, 200));
    x.compute(a);
    y.compute(a);
    const auto xb = x.blocks, yb = y.blocks;
    x.release(a);  // older
    y.release(a);
    CHECK(a.evictable_count() == 4);
    std::vector<int32_t> z;
    REQUIRE(a.grow(z, 2));  // the two never-used blocks first: nothing evicted
    CHECK(a.evictable_count() == 4);
    REQUIRE(a.grow(z, 3));  // then x's tail
    CHECK(z.back() == xb[1]);
    CHECK(a.cached(xb[0]));
    CHECK_FALSE(a.cached(xb[1]));
    REQUIRE(a.grow(z, 4));  // then x's head
    CHECK(z.back() == xb[0]);
    CHECK(a.cached(yb[0]));
    CHECK(a.cached(yb[1]));
    CHECK_FALSE(a.grow(z, 7));  // more than the pool: nothing taken
    CHECK(z.size() == 4);
    CHECK(a.evictable_count() == 2);
}

TEST_CASE("block cache: a block shared again is not evicted, and is the newest once released", "[scheduler][prefix]") {
    BlockAllocator a(4);
    Seq x(a, iota(4, 1)), y(a, iota(4, 50));
    x.compute(a);
    y.compute(a);
    const int32_t xb = x.blocks[0], yb = y.blocks[0];
    x.release(a);
    y.release(a);
    // x's block comes back into use (a request with x's prefix): y's is now the oldest.
    Seq x2(a, iota(4, 1));
    REQUIRE(x2.share(a) == 1);
    CHECK(x2.blocks[0] == xb);
    std::vector<int32_t> z;
    REQUIRE(a.grow(z, 3));  // 2 free and then the only evictable one: y's
    CHECK(std::find(z.begin(), z.end(), xb) == z.end());
    CHECK(std::find(z.begin(), z.end(), yb) != z.end());
    CHECK_FALSE(a.grow(z, 4));  // x's block is held: never handed out
    x2.release(a);
    REQUIRE(a.grow(z, 4));
    CHECK(z.back() == xb);
}

TEST_CASE("block cache: no held block is handed out, whatever the cache holds", "[scheduler][prefix]") {
    BlockAllocator a(8);
    std::vector<Seq> seqs;
    for (int i = 0; i < 4; ++i) seqs.emplace_back(a, iota(8, 1 + 1000 * (i % 2)));  // two prompts, twice each
    for (auto& s : seqs) s.compute(a);
    CHECK(a.held_count() == 4);  // the repeats share
    seqs[0].release(a);
    seqs[1].release(a);
    // seqs[2] and [3] still read their blocks: a grow needing every free block must fail.
    std::vector<int32_t> z;
    CHECK_FALSE(a.grow(z, 5));
    REQUIRE(a.grow(z, 4));
    std::set<int32_t> held(seqs[2].blocks.begin(), seqs[2].blocks.end());
    held.insert(seqs[3].blocks.begin(), seqs[3].blocks.end());
    for (int32_t b : z) CHECK(held.count(b) == 0);
}

TEST_CASE("block cache: every hash collides, and the tokens and parents still decide", "[scheduler][prefix]") {
    BlockAllocator a(16, [](uint64_t, std::span<const int32_t>, std::string_view) { return uint64_t{42}; });
    Seq p(a, {1, 2, 3, 4, 9, 9, 9, 9});
    Seq q(a, {5, 6, 7, 8, 9, 9, 9, 9});  // the same second block after another first
    p.compute(a);
    q.compute(a);
    CHECK(q.blocks[1] != p.blocks[1]);
    SECTION("equal tokens under another parent") {
        Seq q2(a, {5, 6, 7, 8, 9, 9, 9, 9});
        REQUIRE(q2.share(a) == 2);
        CHECK(q2.blocks == q.blocks);
        Seq p2(a, {1, 2, 3, 4, 9, 9, 9, 9});
        REQUIRE(p2.share(a) == 2);
        CHECK(p2.blocks == p.blocks);
    }
    SECTION("other tokens under the same hash") {
        Seq r(a, {1, 2, 3, 4, 9, 9, 9, 8});
        CHECK(r.share(a) == 1);
        Seq s(a, {1, 2, 3, 5});
        CHECK(s.share(a) == 0);
    }
    SECTION("a block filled again is not its old self to its old children") {
        p.release(a);
        q.release(a);
        // Evict everything, then fill p's first block with other tokens.
        std::vector<int32_t> all;
        REQUIRE(a.grow(all, 16));
        CHECK(a.evictable_count() == 0);
        a.release(all);
        Seq other(a, {1, 2, 3, 4});
        other.compute(a);  // a new entry for the same tokens, in whatever block
        other.release(a);
        Seq p3(a, {1, 2, 3, 4, 9, 9, 9, 9});
        CHECK(p3.share(a) == 1);  // p's old second block is gone (evicted), not found through a new parent
    }
}

TEST_CASE("block cache: a stale child is never matched through its parent's block filled again", "[scheduler][prefix]") {
    // A block evicted and filled again with the same tokens is a new entry (a new serial): the old
    // child, still cached because a request holds it, names the old one and is not found through it.
    BlockAllocator a(3, [](uint64_t, std::span<const int32_t>, std::string_view) { return uint64_t{7}; });
    Seq p(a, {1, 1, 1, 1, 2, 2, 2, 2});
    p.compute(a);
    std::vector<int32_t> head = {p.blocks[0]}, tail = {p.blocks[1]};
    a.release(head);  // the head is unheld (evictable); a reader still holds the tail
    std::vector<int32_t> z;
    REQUIRE(a.grow(z, 2));  // the free block, then the head, evicted
    REQUIRE(z[1] == p.blocks[0]);
    Seq again(a, {1, 1, 1, 1, 2, 2, 2, 2});
    again.blocks = {z[1], z[0]};  // the head's old block holds the head again
    a.publish(again.blocks, again.cached, again.tokens, again.hashes, "", 2, kBlock);
    CHECK(a.cached(again.blocks[1]));  // its own second block is published: the stale tail matched nothing
    Seq look(a, {1, 1, 1, 1, 2, 2, 2, 2});
    REQUIRE(look.share(a) == 2);
    CHECK(look.blocks[1] == again.blocks[1]);
    CHECK(look.blocks[1] != tail[0]);
    a.release(tail);
}

TEST_CASE("block cache: salts keep sequences apart", "[scheduler][prefix]") {
    BlockAllocator a(16);
    Seq x(a, iota(8, 1), "tenant-a");
    x.compute(a);
    Seq other(a, iota(8, 1), "tenant-b");
    CHECK(other.share(a) == 0);
    Seq none(a, iota(8, 1));
    CHECK(none.share(a) == 0);
    Seq same(a, iota(8, 1), "tenant-a");
    CHECK(same.share(a) == 2);
    SECTION("even when every hash collides") {
        BlockAllocator c(16, [](uint64_t, std::span<const int32_t>, std::string_view) { return uint64_t{1}; });
        Seq y(c, iota(8, 1), "tenant-a");
        y.compute(c);
        Seq z(c, iota(8, 1), "tenant-b");
        CHECK(z.share(c) == 0);
        Seq w(c, iota(8, 1), "tenant-a");
        CHECK(w.share(c) == 2);
    }
}

TEST_CASE("block cache: two sequences publishing the same block keep one entry", "[scheduler][prefix]") {
    BlockAllocator a(8);
    Seq x(a, iota(4, 1)), y(a, iota(4, 1));
    // Both computed side by side: neither found the other's block.
    REQUIRE(a.grow(x.blocks, 1));
    REQUIRE(a.grow(y.blocks, 1));
    a.publish(x.blocks, x.cached, x.tokens, x.hashes, "", 1, kBlock);
    a.publish(y.blocks, y.cached, y.tokens, y.hashes, "", 1, kBlock);
    CHECK(a.cached(x.blocks[0]));
    CHECK_FALSE(a.cached(y.blocks[0]));  // y's copy stays private and is freed, not kept
    const int32_t yb = y.blocks[0];
    y.release(a);
    x.release(a);
    CHECK(a.evictable_count() == 1);
    std::vector<int32_t> z;
    REQUIRE(a.grow(z, 1));
    CHECK(z[0] == yb);  // free blocks go before cached ones
}

TEST_CASE("block cache: forgetting every block", "[scheduler][prefix]") {
    BlockAllocator a(8);
    Seq x(a, iota(8, 1)), y(a, iota(9, 100));
    x.compute(a);
    y.compute(a);
    x.release(a);
    a.forget_cached();  // y still holds its blocks: they stay held, uncached
    CHECK(a.evictable_count() == 0);
    CHECK(a.held_count() == 3);
    CHECK_FALSE(a.cached(y.blocks[0]));
    y.release(a);
    CHECK(a.free_count() == 8);
    CHECK(a.evictable_count() == 0);
    Seq x2(a, iota(8, 1));
    CHECK(x2.share(a) == 0);
}
