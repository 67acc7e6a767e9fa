#include "row_pool.h"

#include <algorithm>
#include <cstdlib>

namespace radiance::worker {

RowPool::RowPool(int threads) {
    for (int t = 0; t < threads; ++t) threads_.emplace_back([this] { work(); });
}

RowPool::~RowPool() {
    {
        std::lock_guard<std::mutex> lk(mu_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
}

int RowPool::default_threads() {
    if (const char* e = std::getenv("RADIANCE_SAMPLER_THREADS"); e && *e) return std::clamp(std::atoi(e), 0, 256);
    const int cpus = static_cast<int>(std::thread::hardware_concurrency());
    return std::clamp(cpus - 1, 0, 15);
}

void RowPool::drain() {
    std::unique_lock<std::mutex> lk(mu_);
    while (next_ < n_) {
        const size_t i = next_++;
        lk.unlock();
        try {
            (*fn_)(i);
        } catch (...) {
            std::lock_guard<std::mutex> g(mu_);
            if (!error_) error_ = std::current_exception();
        }
        lk.lock();
        if (++done_ == n_) idle_.notify_all();
    }
}

void RowPool::work() {
    unsigned seen = 0;
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
        wake_.wait(lk, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        lk.unlock();
        drain();
        lk.lock();
    }
}

void RowPool::run(size_t n, const std::function<void(size_t)>& fn) {
    if (n == 0) return;
    if (threads_.empty() || n == 1) {
        for (size_t i = 0; i < n; ++i) fn(i);
        return;
    }
    {
        std::lock_guard<std::mutex> lk(mu_);
        fn_ = &fn;
        n_ = n;
        next_ = done_ = 0;
        error_ = nullptr;
        ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock<std::mutex> lk(mu_);
    idle_.wait(lk, [&] { return done_ == n_; });
    n_ = 0;  // a helper waking late finds nothing to take
    fn_ = nullptr;
    if (error_) std::rethrow_exception(error_);
}

}  // namespace radiance::worker
