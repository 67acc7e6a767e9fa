// row_pool.h: rank 0 samples the rows whose logits came back on several threads.
//
// Each row's draw is independent and deterministic (its own seed and position), so spreading the
// rows over threads changes no token. A host plan brings every row back, and the host sampler
// costs ~0.1-2.5 ms a row at a 150k vocabulary (rad-samplebench): at 32 rows, one thread would add
// tens of milliseconds to each step while the kernel library's threads sit idle.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace radiance::worker {

class RowPool {
public:
    // `threads` helpers besides the caller (0: the caller does everything).
    explicit RowPool(int threads);
    ~RowPool();
    RowPool(const RowPool&) = delete;
    RowPool& operator=(const RowPool&) = delete;

    // Runs fn(i) for every i in [0, n), the caller taking part; returns when all are done. The
    // first exception thrown by fn is rethrown here (the other rows still run).
    void run(size_t n, const std::function<void(size_t)>& fn);

    // Helpers for this machine: RADIANCE_SAMPLER_THREADS, else the CPUs less one, at most 15.
    static int default_threads();

private:
    void work();
    void drain();  // takes row indices until none are left

    std::mutex mu_;
    std::condition_variable wake_, idle_;
    std::vector<std::thread> threads_;
    const std::function<void(size_t)>* fn_ = nullptr;
    size_t n_ = 0, next_ = 0, done_ = 0;
    unsigned generation_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
};

}  // namespace radiance::worker
