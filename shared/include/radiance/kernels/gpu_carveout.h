// gpu_carveout.h: RADIANCE_GPU_CARVEOUT=N, a measuring aid for device libraries (CUDA builds;
// included by gpu_runtime.h, whose gpu_launch calls it).
//
// An SM splits its 256 KiB between L1 and shared memory per kernel, and (the hypothesis this aid
// tests) blocks of a kernel that wants another split than the blocks already on an SM wait for
// that SM to drain. In a decode step the gemvs (a few hundred bytes of shared memory, x through
// L1) and attention (74 KiB a block) alternate, so a different split at every boundary may cost
// the overlap that programmatic dependent launch gives. With the variable set (0..100, percent of the largest shared-memory
// size), every kernel launched through gpu_launch asks for that one split, once per kernel.
#pragma once
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
#include <cuda_runtime.h>

#include <cstdlib>
#include <mutex>
#include <unordered_set>

namespace gpu_carveout {

// The percentage asked for, or -1 (unset: each kernel keeps the driver's choice).
inline int wanted() {
    static const int pct = [] {
        const char* e = std::getenv("RADIANCE_GPU_CARVEOUT");
        return e && *e ? std::atoi(e) : -1;
    }();
    return pct;
}

inline void before_launch(const void* kernel) {
    const int pct = wanted();
    if (pct < 0) return;
    static std::mutex mu;
    static std::unordered_set<const void*> seen;
    std::lock_guard<std::mutex> lock(mu);
    if (seen.insert(kernel).second) (void)cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, pct);
}

}  // namespace gpu_carveout
#endif
