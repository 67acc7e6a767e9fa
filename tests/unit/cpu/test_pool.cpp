// libcpu's thread pool (plugins/kernels/cpu/pool.cpp, compiled into this test): every task runs
// exactly once whatever the thread count, nested and concurrent regions run inline instead of
// deadlocking, the forced count overrides the size heuristic, and the pool restarts after
// shutdown.
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "pool.h"

extern "C" int avx_par_force(int threads);

namespace {

// Runs n tasks on `threads` and returns how often each ran.
std::vector<int> run_counts(int64_t n, int threads) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
    cpu::parallel_for(n, threads, [&](int64_t t) { hits[static_cast<size_t>(t)].fetch_add(1); });
    std::vector<int> out;
    for (auto& h : hits) out.push_back(h.load());
    return out;
}

}  // namespace

TEST_CASE("every task runs exactly once", "[pool]") {
    cpu::pool_init();
    for (int threads : {1, 2, 4, 7})
        for (int64_t n : {1, 3, 17, 1000}) {
            auto counts = run_counts(n, threads);
            for (int c : counts) REQUIRE(c == 1);
        }
}

TEST_CASE("back-to-back regions of changing widths run every task once", "[pool]") {
    // Workers outside a narrow region read the job while the next one may be published: the
    // seqlock must never hand a worker a mix of two jobs (which would run tasks twice or never).
    std::vector<std::atomic<int>> hits(64);
    for (int rep = 0; rep < 20000; ++rep) {
        const int threads = 2 + rep % 6;
        const int64_t n = 1 + rep % 64;
        cpu::parallel_for(n, threads, [&](int64_t t) { hits[static_cast<size_t>(t)].fetch_add(1, std::memory_order_relaxed); });
        for (int64_t t = 0; t < n; ++t) REQUIRE(hits[static_cast<size_t>(t)].exchange(0) == 1);
    }
}

TEST_CASE("sleeping workers wake for the next region", "[pool]") {
    // Longer than the workers' spin between regions: they sleep, and each region must wake them
    // (a lost wake-up would leave the caller waiting for its workers forever).
    for (int rep = 0; rep < 20; ++rep) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        auto counts = run_counts(32, 4);
        for (int c : counts) REQUIRE(c == 1);
    }
}

TEST_CASE("a region opened inside a task runs inline", "[pool]") {
    std::atomic<int> inner{0};
    cpu::parallel_for(8, 4, [&](int64_t) { cpu::parallel_for(5, 4, [&](int64_t) { inner.fetch_add(1); }); });
    REQUIRE(inner.load() == 40);
}

TEST_CASE("regions from two threads at once both complete", "[pool]") {
    std::atomic<int64_t> sum_a{0}, sum_b{0};
    auto work = [](std::atomic<int64_t>& sum) {
        for (int rep = 0; rep < 200; ++rep) cpu::parallel_for(64, 4, [&](int64_t t) { sum.fetch_add(t); });
    };
    std::thread a([&] { work(sum_a); }), b([&] { work(sum_b); });
    a.join();
    b.join();
    REQUIRE(sum_a.load() == 200 * (63 * 64 / 2));
    REQUIRE(sum_b.load() == 200 * (63 * 64 / 2));
}

TEST_CASE("avx_par_force overrides the size heuristic", "[pool]") {
    REQUIRE(cpu::threads_for(10, 1e6) == 1);  // tiny work: one thread
    avx_par_force(4);
    REQUIRE(cpu::threads_for(10, 1e6) == 4);
    REQUIRE(cpu::tasks_for(3, 4, 100) == 3);  // never more tasks than units
    REQUIRE(cpu::tasks_for(1000, 4, 1) >= 4);
    avx_par_force(0);
    REQUIRE(cpu::forced_threads() == 0);
}

TEST_CASE("the pool restarts after shutdown", "[pool]") {
    cpu::pool_shutdown();
    auto counts = run_counts(100, 3);
    for (int c : counts) REQUIRE(c == 1);
}
