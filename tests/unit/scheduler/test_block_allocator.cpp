// The front end's KV block accounting: all-or-nothing growth, release, reset.
// Mutations seen failing (2026-12-04): grow() taking what there is when it is short ("a short grow takes
// nothing"); release() not returning blocks ("released blocks serve again").
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>

#include "block_allocator.h"

using radiance::frontend::BlockAllocator;

TEST_CASE("block allocator: grow, all or nothing, release, reset", "[scheduler][blocks]") {
    BlockAllocator a(8);
    std::vector<int32_t> x, y;
    REQUIRE(a.grow(x, 3));
    REQUIRE(a.grow(x, 3));  // already that many: nothing taken
    CHECK(x.size() == 3);
    CHECK(a.free_count() == 5);
    REQUIRE(a.grow(y, 5));
    std::set<int32_t> all(x.begin(), x.end());
    all.insert(y.begin(), y.end());
    CHECK(all.size() == 8);  // no block handed out twice
    CHECK(*all.begin() == 0);
    CHECK(*all.rbegin() == 7);
    std::vector<int32_t> z;
    CHECK_FALSE(a.grow(z, 1));  // a short grow takes nothing
    CHECK(z.empty());
    a.release(x);
    CHECK(x.empty());
    CHECK(a.free_count() == 3);
    CHECK_FALSE(a.grow(z, 4));
    CHECK(a.free_count() == 3);
    REQUIRE(a.grow(z, 3));  // released blocks serve again
    a.reset(2);
    CHECK(a.total() == 2);
    CHECK(a.free_count() == 2);
}
