// pool.cpp: the persistent thread pool behind parallel_run, and avx_par_force.
#include "pool.h"

#include "env.h"
#include "numa.h"

#include <radiance/rad_plugin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define CPU_PAUSE() _mm_pause()
#else
#define CPU_PAUSE() ((void)0)
#endif

namespace cpu {
namespace {

// The published job is a seqlock: the region's caller (one at a time, under `region`) makes
// `seq` odd, writes the fields, then makes it even; a worker reads an even `seq`, the fields, and
// `seq` again, and retries when it moved. No mutex on the way in: with the job copied under a
// mutex, 15 workers woken at once queued on it (and on its futex) at every region, which is
// most of what a 16-thread decode step's ~200 regions cost beyond the arithmetic.
struct Job {
    TaskFn fn = nullptr;
    void* ctx = nullptr;
    int64_t n = 0;
    int workers = 0;  // worker indices below this take part
};

struct Pool {
    int size = 1;
    std::atomic<int> forced{0};
    std::mutex region;  // one region at a time
    std::mutex mu;      // guards threads and the sleep handshake
    std::condition_variable cv;
    std::vector<std::thread> threads;
    std::atomic<uint64_t> seq{0};  // even: job seq / 2 published; odd: being written
    std::atomic<TaskFn> fn{nullptr};
    std::atomic<void*> ctx{nullptr};
    std::atomic<int64_t> n{0};
    std::atomic<int> workers{0};
    std::atomic<int64_t> next{0};
    std::atomic<int> done{0};
    std::atomic<int> sleeping{0};
    std::atomic<bool> stop{false};
    std::chrono::microseconds spin{60};  // how long an idle worker polls before it sleeps
    std::vector<NumaNode> nodes;         // two or more, or none (numa.h)
    bool initialised = false;
};

// Never destroyed: worker threads may outlive static destruction at exit (the library is linked
// -z nodelete, so its code stays mapped while they sleep).
Pool& pool() {
    static Pool* p = new Pool;
    return *p;
}

thread_local bool t_in_region = false;    // set on workers and on a caller inside its region
thread_local bool t_interleaved = false;  // this thread's allocations already spread over the nodes

// On a machine of several nodes: this thread allocates interleaved over them (once), and worker
// `index` (-1: a region's caller, left unbound) runs on its node's CPUs.
void join_nodes(const Pool& P, int index) {
    if (P.nodes.empty()) return;
    if (!t_interleaved) t_interleaved = interleave_memory(P.nodes);
    if (const int n = worker_node(index, P.nodes.size()); n >= 0) bind_to_node(P.nodes[static_cast<size_t>(n)]);
}

void drain(const Job& j, std::atomic<int64_t>& next) {
    for (int64_t t; (t = next.fetch_add(1, std::memory_order_relaxed)) < j.n;) j.fn(j.ctx, t);
}

void publish(Pool& P, const Job& j) {
    const uint64_t s = P.seq.load(std::memory_order_relaxed);
    P.seq.store(s + 1, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);
    P.fn.store(j.fn, std::memory_order_relaxed);
    P.ctx.store(j.ctx, std::memory_order_relaxed);
    P.n.store(j.n, std::memory_order_relaxed);
    P.workers.store(j.workers, std::memory_order_relaxed);
    P.seq.store(s + 2, std::memory_order_release);
}

// The job published as `s` (even), or false when `seq` moved while it was read.
bool read_job(const Pool& P, uint64_t s, Job& j) {
    j.fn = P.fn.load(std::memory_order_relaxed);
    j.ctx = P.ctx.load(std::memory_order_relaxed);
    j.n = P.n.load(std::memory_order_relaxed);
    j.workers = P.workers.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    return P.seq.load(std::memory_order_relaxed) == s;
}

// A published job newer than `seen` (an even seq), or `seen` itself.
uint64_t newer(const Pool& P, uint64_t seen) {
    const uint64_t s = P.seq.load(std::memory_order_acquire);
    return s != seen && s % 2 == 0 ? s : seen;
}

void worker_main(Pool& P, int index, uint64_t seen) {
    t_in_region = true;
    join_nodes(P, index);
    using clock = std::chrono::steady_clock;
    for (;;) {
        // Decode issues regions back to back with a few microseconds between them: spin that
        // long before sleeping, no longer (the machine is shared).
        const auto t0 = clock::now();
        uint64_t s = newer(P, seen);
        for (int spins = 1; s == seen && !P.stop.load(std::memory_order_relaxed); ++spins, s = newer(P, seen)) {
            CPU_PAUSE();
            if (spins % 128 == 0 && clock::now() - t0 > P.spin) break;
        }
        if (s == seen) {
            // Asleep until a caller publishes: `sleeping` is raised before `seq` is read again
            // and the caller reads `sleeping` after publishing (both sequentially consistent),
            // so either this thread sees the new job or the caller sees it asleep and notifies.
            std::unique_lock<std::mutex> lk(P.mu);
            P.sleeping.fetch_add(1, std::memory_order_seq_cst);
            while ((s = newer(P, seen)) == seen && !P.stop.load(std::memory_order_seq_cst)) P.cv.wait(lk);
            P.sleeping.fetch_sub(1, std::memory_order_relaxed);
        }
        if (P.stop.load(std::memory_order_acquire)) return;
        if (s == seen) continue;
        Job j;
        if (!read_job(P, s, j)) continue;  // a newer job is being written: take that one
        seen = s;
        if (index < j.workers) {
            drain(j, P.next);
            P.done.fetch_add(1, std::memory_order_release);
        }
    }
}

int machine_threads() {
    const size_t n = allowed_cpus().size();
    return n > 0 ? static_cast<int>(n) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

void pool_init() {
    Pool& P = pool();
    std::lock_guard<std::mutex> lk(P.mu);
    if (P.initialised) return;
    P.initialised = true;
    P.size = static_cast<int>(env_long("RADIANCE_THREADS", 1, 1024, machine_threads()));
    P.spin = std::chrono::microseconds(env_long("RADIANCE_CPU_SPIN_US", 0, 1000000, P.spin.count()));
    if (env_long("RADIANCE_CPU_NUMA", 0, 1, 1) == 1) {
        std::vector<NumaNode> nodes = numa_nodes("/sys/devices/system/node", allowed_cpus());
        if (nodes.size() > 1) P.nodes = std::move(nodes);
    }
    join_nodes(P, -1);  // the opening thread: the container's pages it reads in spread too
}

void pool_shutdown() {
    Pool& P = pool();
    std::lock_guard<std::mutex> region(P.region);
    std::vector<std::thread> ts;
    {
        std::lock_guard<std::mutex> lk(P.mu);
        P.stop.store(true, std::memory_order_seq_cst);
        ts.swap(P.threads);
    }
    P.cv.notify_all();
    for (auto& t : ts) t.join();
    P.stop.store(false, std::memory_order_seq_cst);
}

int pool_size() { return pool().size; }
int forced_threads() { return pool().forced.load(std::memory_order_relaxed); }

int threads_for(double work, double per_thread) {
    const Pool& P = pool();
    if (int f = P.forced.load(std::memory_order_relaxed); f > 0) return f;
    if (P.size <= 1 || per_thread <= 0) return 1;
    const double t = work / per_thread;
    return t < 2.0 ? 1 : static_cast<int>(std::min<double>(t, P.size));
}

int64_t tasks_for(int64_t units, int threads, int64_t min_units) {
    if (threads <= 1 || units <= 1) return 1;
    int64_t t = std::min<int64_t>(int64_t{threads} * 4, std::max<int64_t>(1, units / std::max<int64_t>(1, min_units)));
    return std::max(t, std::min<int64_t>(threads, units));
}

void parallel_run(int64_t n_tasks, int threads, TaskFn fn, void* ctx) {
    if (n_tasks <= 0) return;
    if (threads > n_tasks) threads = static_cast<int>(n_tasks);
    auto serial = [&] {
        for (int64_t t = 0; t < n_tasks; ++t) fn(ctx, t);
    };
    if (threads <= 1 || t_in_region) return serial();
    Pool& P = pool();
    std::unique_lock<std::mutex> region(P.region, std::try_to_lock);
    if (!region.owns_lock()) return serial();  // another thread's region holds the pool
    join_nodes(P, -1);                         // the caller's first touches of the weights spread over the nodes too
    const int workers = threads - 1;
    if (static_cast<int>(P.threads.size()) < workers) {  // only regions (holding `region`) grow it
        std::lock_guard<std::mutex> lk(P.mu);
        while (static_cast<int>(P.threads.size()) < workers)
            P.threads.emplace_back(worker_main, std::ref(P), static_cast<int>(P.threads.size()), P.seq.load(std::memory_order_relaxed));
    }
    const Job j{fn, ctx, n_tasks, workers};
    P.next.store(0, std::memory_order_relaxed);
    P.done.store(0, std::memory_order_relaxed);
    publish(P, j);
    std::atomic_thread_fence(std::memory_order_seq_cst);  // the publication before the read of `sleeping`
    if (P.sleeping.load(std::memory_order_relaxed) > 0) {
        std::lock_guard<std::mutex> lk(P.mu);
        P.cv.notify_all();
    }
    t_in_region = true;
    drain(j, P.next);
    t_in_region = false;
    // The caller's share is done; wait for the workers (yielding, in case they share our core).
    for (int spins = 0; P.done.load(std::memory_order_acquire) < workers; ++spins) {
        if (spins < 2000)
            CPU_PAUSE();
        else
            std::this_thread::yield();
    }
}

}  // namespace cpu

extern "C" {
// Forces every parallel region onto `threads` threads, however small (a checker's switch);
// 0 or less restores the automatic choice. Returns the previous forced count (0: automatic).
RAD_EXPORT int avx_par_force(int threads) { return cpu::pool().forced.exchange(threads > 0 ? threads : 0); }
}
