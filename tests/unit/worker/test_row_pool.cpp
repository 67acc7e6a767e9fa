// The worker's row pool: every row runs exactly once per run, on several threads, run after run;
// a row that throws surfaces in the caller after the others ran.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "row_pool.h"

using radiance::worker::RowPool;

TEST_CASE("row pool: every row once, on more than one thread, run after run", "[worker]") {
    RowPool pool(3);
    for (size_t n : {0u, 1u, 2u, 7u, 64u, 1000u}) {
        for (int rep = 0; rep < 20; ++rep) {
            std::vector<std::atomic<int>> hits(n);
            std::mutex mu;
            std::set<std::thread::id> threads;
            pool.run(n, [&](size_t i) {
                hits[i]++;
                if (n >= 64) {  // a little work, so helpers get a share
                    volatile double x = 0;
                    for (int k = 0; k < 20000; ++k) x = x + k;
                }
                std::lock_guard<std::mutex> lk(mu);
                threads.insert(std::this_thread::get_id());
            });
            for (size_t i = 0; i < n; ++i) REQUIRE(hits[i] == 1);
            if (n >= 1000 && rep == 19) CHECK(threads.size() > 1);
        }
    }
}

TEST_CASE("row pool: a throwing row surfaces in the caller after the other rows ran", "[worker]") {
    RowPool pool(2);
    std::atomic<int> ran{0};
    CHECK_THROWS_WITH(pool.run(50,
                               [&](size_t i) {
                                   ran++;
                                   if (i == 17) throw std::runtime_error("row 17 failed");
                               }),
                      "row 17 failed");
    CHECK(ran == 50);
    ran = 0;
    pool.run(10, [&](size_t) { ran++; });  // and the pool still works
    CHECK(ran == 10);
}

TEST_CASE("row pool: with no helpers the caller runs every row", "[worker]") {
    RowPool pool(0);
    std::vector<size_t> order;
    pool.run(5, [&](size_t i) { order.push_back(i); });
    CHECK(order == std::vector<size_t>{0, 1, 2, 3, 4});
}
