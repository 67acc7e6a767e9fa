// parallel.h: tasks on the machine's threads, for the quantisers' heavy arithmetic (gptq's factor
// and column sweep). A task is an index; threads take the next one from a shared counter, so
// tasks of unequal work (the rows of a triangle) balance themselves.
#pragma once
#include <cstdint>
#include <functional>

namespace quant {

// The threads the quantisers use: RADIANCE_THREADS where it is set (1-1024, as libcpu reads it),
// else the CPUs this process may run on.
int quant_threads();

// fn(t) for every t in [0, n), on up to quant_threads() threads (the caller's among them); returns
// when all are done.
void parallel_tasks(int64_t n, const std::function<void(int64_t)>& fn);

}  // namespace quant
