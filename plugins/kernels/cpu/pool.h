// pool.h: libcpu's persistent thread pool.
//
// One pool per process, sized at rad_plugin_open from the CPUs this process may run on
// (sched_getaffinity, else std::thread::hardware_concurrency), RADIANCE_THREADS overriding.
// A parallel region hands out task indices [0, n) from an atomic counter (dynamic scheduling:
// on a shared machine another process may take a core away from one of our threads). Regions do
// not nest and do not overlap: a region opened from a worker, or while another thread holds the
// pool, runs inline on the caller.
#pragma once
#include <cstdint>
#include <type_traits>

namespace cpu {

using TaskFn = void (*)(void* ctx, int64_t task);

// Runs fn(ctx, t) for every t in [0, n_tasks) on up to `threads` threads, the caller included.
void parallel_run(int64_t n_tasks, int threads, TaskFn fn, void* ctx);

template <class F>
void parallel_for(int64_t n_tasks, int threads, F&& f) {
    using Fn = std::remove_reference_t<F>;
    parallel_run(
        n_tasks, threads, [](void* c, int64_t t) { (*static_cast<Fn*>(c))(t); }, const_cast<void*>(static_cast<const void*>(&f)));
}

// How many threads a region of `work` (any unit) should use when one thread deserves at least
// `per_thread` of it: 1 for small regions, the pool size for large ones; the forced count
// (avx_par_force) whatever the size.
int threads_for(double work, double per_thread);
// Tasks to cut `units` into for `threads` threads: a few per thread for balance, each of at
// least `min_units`, and never fewer than `threads` when units allow (so forced counts are real).
int64_t tasks_for(int64_t units, int threads, int64_t min_units);

int pool_size();       // threads a region may use (workers + the caller)
int forced_threads();  // avx_par_force's count, 0 when automatic
void pool_init();      // reads RADIANCE_THREADS; idempotent
void pool_shutdown();  // joins the workers (rad_plugin_close)

}  // namespace cpu
