// phase.cpp: the host side of k_phase.h's stamps (RADIANCE_GPU_PHASES builds only).
#ifdef RAD_GPU_PHASES
#include <radiance/kernels/gpu_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "k_phase.h"

namespace gpu {
namespace {

constexpr uint64_t kSlots = uint64_t{1} << 24;  // 128 MiB of card memory; bases wrap here

struct Launch {
    int kind;
    uint64_t base, blocks;
    int phases;
    bool captured;  // inside a graph capture: its slots hold the last replay
};

struct Phases {
    unsigned long long* dev = nullptr;
    uint64_t next = 0;
    std::vector<Launch> launches;
    std::mutex mu;
    const char* out = nullptr;
};

void write_out();

Phases& phases() {
    static Phases* p = [] {
        auto* s = new Phases();  // never destroyed: write_out reads it at exit
        s->out = std::getenv("RADIANCE_GPU_PHASES_OUT");
        if (!s->out || !*s->out) return s;
        // Card memory, read back at exit: no PCIe write in a kernel's path (a first version wrote
        // mapped host memory; both gave the same timeline).
        if (gpuMalloc(reinterpret_cast<void**>(&s->dev), kSlots * sizeof(unsigned long long)) != gpuSuccess ||
            gpuMemset(s->dev, 0, kSlots * sizeof(unsigned long long)) != gpuSuccess) {
            std::fprintf(stderr, "[warn] RADIANCE_GPU_PHASES_OUT: no card memory for the stamps; none\n");
            s->dev = nullptr;
            return s;
        }
        std::atexit(write_out);  // after the CUDA runtime's own (it has started): runs before its teardown
        std::fprintf(stderr, "[warn] libgpu phase stamps on (a measuring build): %s at exit\n", s->out);
        return s;
    }();
    return *p;
}

// One line a launch whose slots were not reused since: "L kind blocks phases captured", then one
// line a block: its stamps in ns (0: the block did not reach that point).
void write_out() {
    Phases& p = phases();
    std::lock_guard<std::mutex> lock(p.mu);
    std::vector<unsigned long long> host(kSlots);
    if (!p.dev || gpuDeviceSynchronize() != gpuSuccess ||
        gpuMemcpy(host.data(), p.dev, kSlots * sizeof(unsigned long long), gpuMemcpyDeviceToHost) != gpuSuccess) {
        std::fprintf(stderr, "[warn] libgpu phase stamps: could not read them back\n");
        return;
    }
    FILE* f = std::fopen(p.out, "w");
    if (!f) return;
    for (size_t i = 0; i < p.launches.size(); ++i) {
        const Launch& l = p.launches[i];
        if (p.next - l.base > kSlots) continue;  // overwritten by later launches (the bases wrapped)
        std::fprintf(f, "L %d %llu %d %d\n", l.kind, static_cast<unsigned long long>(l.blocks), l.phases, l.captured ? 1 : 0);
        for (uint64_t b = 0; b < l.blocks; ++b) {
            for (int k = 0; k < l.phases; ++k) std::fprintf(f, k ? " %llu" : "%llu", host[(l.base + b * l.phases + k) % kSlots]);
            std::fputc('\n', f);
        }
    }
    std::fclose(f);
}

}  // namespace

unsigned long long* phase_slots(int kind, int64_t blocks, int n_phases, gpuStream_t s) {
    Phases& p = phases();
    if (!p.dev) return nullptr;
    std::lock_guard<std::mutex> lock(p.mu);
    const uint64_t need = static_cast<uint64_t>(blocks) * n_phases;
    if (need > kSlots / 4) return nullptr;
    if (p.next % kSlots + need > kSlots) p.next += kSlots - p.next % kSlots;  // a launch's slots never wrap
    gpuStreamCaptureStatus st = gpuStreamCaptureStatusNone;
    gpuStreamIsCapturing(s, &st);
    Launch l{kind, p.next, static_cast<uint64_t>(blocks), n_phases, st == gpuStreamCaptureStatusActive};
    p.launches.push_back(l);
    unsigned long long* at = p.dev + p.next % kSlots;
    p.next += need;
    return at;
}

}  // namespace gpu
#endif
