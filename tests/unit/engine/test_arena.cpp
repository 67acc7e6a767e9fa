// plan_arena (shared/engine/arena.h): transient buffers whose lives overlap never share bytes,
// offsets are aligned, and the arena is no larger than needed by much: at least the most bytes
// alive at one op, at most every buffer side by side.
// Mutations seen failing (2026-12-04): the liveness test written with `<` instead of `<=`
// (buffers alive at the same single op share bytes); `off + size <= a` as `off < a` (a gap too
// small is taken: overlaps).
#include <algorithm>
#include <random>

#include <catch2/catch.hpp>

#include "arena.h"

using radiance::engine::ArenaItem;
using radiance::engine::plan_arena;

namespace {

uint64_t aligned(uint64_t b, uint64_t a) { return (b + a - 1) / a * a; }

void check(std::vector<ArenaItem> items, uint64_t align) {
    const uint64_t total = plan_arena(items, align);
    uint64_t side_by_side = 0, end = 0;
    int last_op = 0;
    for (const auto& it : items) {
        REQUIRE(it.offset % align == 0);
        side_by_side += aligned(it.bytes, align);
        end = std::max(end, it.offset + aligned(it.bytes, align));
        last_op = std::max(last_op, it.last);
    }
    CHECK(total == end);
    CHECK(total <= side_by_side);
    for (size_t i = 0; i < items.size(); ++i)
        for (size_t j = i + 1; j < items.size(); ++j) {
            const ArenaItem &a = items[i], &b = items[j];
            const bool alive_together = a.first <= b.last && b.first <= a.last;
            const bool bytes_overlap = a.offset < b.offset + aligned(b.bytes, align) && b.offset < a.offset + aligned(a.bytes, align);
            INFO("items " << i << " and " << j);
            REQUIRE(!(alive_together && bytes_overlap && a.bytes && b.bytes));
        }
    for (int op = 0; op <= last_op; ++op) {  // the lower bound: what is alive at once
        uint64_t live = 0;
        for (const auto& it : items)
            if (it.first <= op && op <= it.last) live += aligned(it.bytes, align);
        CHECK(total >= live);
    }
}

}  // namespace

TEST_CASE("plan_arena: a chain reuses bytes, lives that meet at one op do not share", "[engine][arena]") {
    // a -> b -> c: a and c never live together and may share; b meets both at one op each.
    std::vector<ArenaItem> chain = {{1000, 0, 1}, {2000, 1, 2}, {1000, 2, 3}};
    const uint64_t total = plan_arena(chain, 256);
    CHECK(total == 1024 + 2048);
    CHECK(chain[0].offset == chain[2].offset);
    check(chain, 256);
}

TEST_CASE("plan_arena: random lives and sizes", "[engine][arena]") {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; ++round) {
        std::vector<ArenaItem> items(1 + rng() % 40);
        for (auto& it : items) {
            it.bytes = rng() % 5 == 0 ? 0 : 1 + rng() % 100000;
            it.first = static_cast<int>(rng() % 60);
            it.last = it.first + static_cast<int>(rng() % (round % 2 ? 4 : 30));
        }
        INFO("round " << round);
        check(items, round % 3 == 0 ? 64 : 256);
    }
}
