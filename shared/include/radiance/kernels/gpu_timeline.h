// gpu_timeline.h: RADIANCE_GPU_TIMELINE=1, a measuring aid for device libraries (CUDA builds;
// included by gpu_runtime.h, whose gpu_pdl_config it uses).
//
// Nsight Systems is not on the H200 machines this project measures on, and a per-kernel
// profile (Nsight Compute) runs kernels one at a time, so neither shows what a kernel adds to a
// recorded decode step where programmatic dependent launch overlaps each kernel with the one
// before it. With the variable set, gpu_launch follows every kernel with a one-thread kernel
// that waits for it (griddepcontrol.wait, after letting the next kernel be scheduled) and writes
// the card's clock into pinned host memory at the launch's number; graphs record those launches
// like any other, so every replay rewrites the same slots. At exit the library prints, per
// kernel name, the time from the previous kernel's completion to its own: what it adds to the
// step, launch gaps included. Each record is a launch of its own (about a microsecond in the
// chain), so the sum is a little above the plain step.
#pragma once
#if defined(__CUDACC__) && !defined(__HIP_PLATFORM_AMD__)
#include <cuda_runtime.h>
#include <cxxabi.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace gpu_timeline {

constexpr uint64_t kSlots = uint64_t{1} << 20;  // launch numbers wrap here (8 MiB of pinned memory)

struct State {
    bool on = false;
    uint64_t* host = nullptr;  // mapped: the stamps land here without a copy
    uint64_t* dev = nullptr;
    uint64_t next = 0;
    std::vector<const void*> kernel;  // by slot
    std::mutex mu;
};

inline void report();

inline State& state() {
    static State* s = [] {
        auto* t = new State();  // never destroyed: report() reads it at exit
        const char* e = std::getenv("RADIANCE_GPU_TIMELINE");
        if (!e || !*e || std::strcmp(e, "0") == 0) return t;
        void* h = nullptr;
        if (cudaHostAlloc(&h, kSlots * sizeof(uint64_t), cudaHostAllocMapped) != cudaSuccess ||
            cudaHostGetDevicePointer(reinterpret_cast<void**>(&t->dev), h, 0) != cudaSuccess) {
            std::fprintf(stderr, "[warn] RADIANCE_GPU_TIMELINE: no mapped host memory; off\n");
            return t;
        }
        std::memset(h, 0, kSlots * sizeof(uint64_t));
        t->host = static_cast<uint64_t*>(h);
        t->kernel.assign(kSlots, nullptr);
        t->on = true;
        std::atexit(report);
        std::fprintf(stderr, "[warn] RADIANCE_GPU_TIMELINE=1: a stamp kernel after every launch (timing aid)\n");
        return t;
    }();
    return *s;
}

template <int>
__global__ void k_stamp(uint64_t* slots, uint64_t slot) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    *reinterpret_cast<volatile uint64_t*>(slots + slot) = t;
}

// After each launch of gpu_launch: a stamp for `kernel` on the same queue.
inline void after_launch(const void* kernel, cudaStream_t s) {
    State& st = state();
    if (!st.on) return;
    uint64_t slot;
    {
        std::lock_guard<std::mutex> lock(st.mu);
        slot = st.next++ % kSlots;
        st.kernel[slot] = kernel;
    }
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = gpu_pdl_config(dim3(1), dim3(1), 0, s, &attr);
    cudaLaunchKernelEx(&cfg, k_stamp<0>, st.dev, slot);
}

// A kernel's demangled name without its parameter list ("k_gemv_block<__nv_bfloat16, 1, 4, ...>").
inline std::string name_of(const void* kernel) {
    const char* raw = nullptr;
    if (cudaFuncGetName(&raw, kernel) != cudaSuccess || !raw) return "?";
    int status = 0;
    char* d = abi::__cxa_demangle(raw, nullptr, nullptr, &status);
    std::string n = status == 0 && d ? d : raw;
    std::free(d);
    // "(anonymous namespace)::" would end the name at its parenthesis below
    for (size_t at; (at = n.find("(anonymous namespace)::")) != std::string::npos;) n.erase(at, 23);
    if (const size_t paren = n.find('('); paren != std::string::npos) n.resize(paren);
    if (n.rfind("void ", 0) == 0) n.erase(0, 5);
    return n;
}

// Each kernel's share: the gaps between consecutive stamps (0 < gap < 1 ms: the same replay or
// run; a larger or negative one is a boundary between steps, graphs or wrapped slots).
inline void report() {
    State& st = state();
    if (!st.on) return;
    cudaDeviceSynchronize();
    const uint64_t n = std::min(st.next, kSlots);
    std::map<const void*, std::pair<uint64_t, double>> by_kernel;  // count, ns
    double total = 0;
    for (uint64_t i = 1; i < n; ++i) {
        const uint64_t a = st.host[i - 1], b = st.host[i];
        if (!a || !b || b <= a || b - a >= 1000000) continue;
        auto& [count, ns] = by_kernel[st.kernel[i]];
        ++count;
        ns += static_cast<double>(b - a);
        total += static_cast<double>(b - a);
    }
    std::vector<std::pair<double, std::string>> rows;
    std::map<std::string, std::pair<uint64_t, double>> by_name;
    for (auto& [k, v] : by_kernel) {
        auto& [count, ns] = by_name[name_of(k)];
        count += v.first;
        ns += v.second;
    }
    std::fprintf(stderr, "[timeline] %llu launches stamped; per kernel, the time from the previous kernel's completion to its own\n",
                 static_cast<unsigned long long>(st.next));
    std::fprintf(stderr, "[timeline] %-100s %9s %10s %11s %7s\n", "kernel", "count", "mean us", "total ms", "share");
    for (auto& [name, v] : by_name) rows.push_back({v.second, name});
    std::sort(rows.rbegin(), rows.rend());
    for (auto& [ns, name] : rows) {
        const auto& v = by_name[name];
        std::fprintf(stderr, "[timeline] %-100.100s %9llu %10.2f %11.3f %6.1f%%\n", name.c_str(), static_cast<unsigned long long>(v.first),
                     ns / 1e3 / static_cast<double>(v.first), ns / 1e6, total > 0 ? 100.0 * ns / total : 0.0);
    }
}

}  // namespace gpu_timeline
#endif
