#include "parallel.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>

namespace quant {

int quant_threads() {
    if (const char* e = std::getenv("RADIANCE_THREADS")) {
        char* end = nullptr;
        const long v = std::strtol(e, &end, 10);
        if (end != e && !*end && v >= 1 && v <= 1024) return static_cast<int>(v);
    }
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void parallel_tasks(int64_t n, const std::function<void(int64_t)>& fn) {
    if (n <= 0) return;
    const int64_t threads = std::min<int64_t>(quant_threads(), n);
    std::atomic<int64_t> next{0};
    auto work = [&] {
        for (int64_t t; (t = next.fetch_add(1)) < n;) fn(t);
    };
    std::vector<std::thread> pool;
    for (int64_t i = 1; i < threads; ++i) pool.emplace_back(work);
    work();
    for (auto& t : pool) t.join();
}

}  // namespace quant
