// rad-poolbench [--threads 2,4,...] [--regions N]
//
// What one parallel region of libcpu's thread pool costs beyond its work: regions of `threads`
// trivial tasks back to back (a decode step of a 0.5B-1B model issues ~200 of them, each ~20-100
// us of arithmetic at 16 threads), then the same with a pause between regions long enough that
// the workers go to sleep (the cost of waking them). Prints microseconds per region. The pool
// is compiled in from plugins/kernels/cpu/pool.cpp, so it measures exactly what libcpu runs.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "pool.h"

namespace {

std::vector<int> parse_ints(const char* s) {
    std::vector<int> v;
    for (const char* p = s; *p;) {
        char* end = nullptr;
        const long x = std::strtol(p, &end, 10);
        if (end == p) break;
        if (x > 0) v.push_back(static_cast<int>(x));
        p = *end == ',' ? end + 1 : end;
    }
    return v;
}

// Median-free and simple: total time of `regions` regions / regions, in microseconds.
double us_per_region(int threads, int regions, std::chrono::microseconds gap) {
    std::atomic<int64_t> sink{0};
    auto one = [&] { cpu::parallel_for(threads, threads, [&](int64_t t) { sink.fetch_add(t, std::memory_order_relaxed); }); };
    for (int i = 0; i < 50; ++i) one();  // workers started and warm
    using clock = std::chrono::steady_clock;
    double total = 0;
    for (int i = 0; i < regions; ++i) {
        if (gap.count() > 0) std::this_thread::sleep_for(gap);
        const auto t0 = clock::now();
        one();
        total += std::chrono::duration<double, std::micro>(clock::now() - t0).count();
    }
    return total / regions;
}

}  // namespace

int main(int argc, char** argv) {
    cpu::pool_init();
    std::vector<int> threads;
    int regions = 20000;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = parse_ints(argv[++i]);
        else if (!std::strcmp(argv[i], "--regions") && i + 1 < argc)
            regions = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: rad-poolbench [--threads 2,4,...] [--regions N]\n");
            return 2;
        }
    }
    if (threads.empty()) threads = {2, cpu::pool_size()};
    if (regions < 1) regions = 1;
    std::printf("pool size %d (RADIANCE_THREADS or the CPUs this process may use)\n", cpu::pool_size());
    std::printf("%8s %18s %22s\n", "threads", "us/region (busy)", "us/region (after 1 ms)");
    for (int t : threads) {
        const double busy = us_per_region(t, regions, std::chrono::microseconds(0));
        const double woken = us_per_region(t, regions / 100 > 0 ? regions / 100 : 1, std::chrono::microseconds(1000));
        std::printf("%8d %18.2f %22.2f\n", t, busy, woken);
    }
    cpu::pool_shutdown();
    return 0;
}
