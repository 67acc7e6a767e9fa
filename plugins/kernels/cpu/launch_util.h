// launch_util.h: operand access and the row-parallel loop the launchers share.
#pragma once
#include <radiance/rad_plugin.h>

#include <algorithm>

#include "cpu_kernels.h"
#include "pool.h"

namespace cpu {

inline bool is_f32(const RadTensor* t) { return t && t->dtype == RAD_F32; }
inline bool is_i32(const RadTensor* t) { return t && t->dtype == RAD_I32; }
inline bool is_float_dtype(int dt) { return dt == RAD_F32 || dt == RAD_BF16 || dt == RAD_F16; }

inline RowsIn rows_in(const RadTensor* t) { return {static_cast<const char*>(t->data), rad_tensor_row_pitch(t)}; }
inline RowsOut rows_out(RadTensor* t) { return {static_cast<char*>(t->data), rad_tensor_row_pitch(t)}; }

// Below this many element operations a thread is not worth waking (a wake-up and the cache
// misses it costs are a few microseconds).
constexpr double kMinWorkPerThread = 32768;

// Runs fn(args, i0, i1) over rows [0, n) in contiguous slices, on the pool when the rows carry
// enough work (`row_work` element operations each).
template <class A>
void for_rows(int64_t n, double row_work, void (*fn)(const A&, int64_t, int64_t), const A& args) {
    if (n <= 0) return;
    const int threads = threads_for(static_cast<double>(n) * row_work, kMinWorkPerThread);
    const int64_t tasks = tasks_for(n, threads, 1);
    const int64_t chunk = (n + tasks - 1) / tasks;
    parallel_for(tasks, threads, [&](int64_t t) {
        const int64_t i0 = t * chunk, i1 = std::min(n, i0 + chunk);
        if (i0 < i1) fn(args, i0, i1);
    });
}

}  // namespace cpu
