// k_phase.h: phase stamps inside kernels, a measuring aid built only with
// -DRADIANCE_GPU_PHASES=ON (a libgpu of its own for the measuring call; the normal build has none
// of this: RAD_PHASE is empty and no struct carries the slots).
//
// The CUPTI timeline (tools/rad-cudatrace) says when each kernel of a recorded decode step starts
// and ends, not where inside a kernel of the attention chain the time goes: whether a block waits
// to become resident, for its predecessor's grid, for a round trip or for its arithmetic. A
// launch that stamps asks the host for a base slot (phase_slots: kind, blocks, phases a block);
// thread 0 of each block stores the card's global clock into slot base + block * phases + phase
// at the points the kernel names. The slots are card memory (plain stores, no atomics and no
// round trip in the kernel's path), read back at exit; a recorded graph keeps its launches' bases, so each replay
// rewrites its step's slots and the file holds the last replay of each graph. At exit the library
// writes RADIANCE_GPU_PHASES_OUT (bench/gpu/phase_summary.py reads it).
#pragma once
#include <radiance/kernels/gpu_runtime.h>

#include <cstdint>

namespace gpu {

enum PhaseKind : int { kPhaseGemvNorm = 1, kPhaseGemvAdd = 2, kPhaseAttention = 3, kPhaseMerge = 4 };

#ifdef RAD_GPU_PHASES
// Host: the base pointer for a launch on `s` of `blocks` blocks stamping `phases` points each
// (null when RADIANCE_GPU_PHASES_OUT is unset).
unsigned long long* phase_slots(int kind, int64_t blocks, int phases, gpuStream_t s);

#if defined(__CUDACC__)
__device__ __forceinline__ void gpu_phase(unsigned long long* slots, int phases, int phase) {
    if (slots && threadIdx.x == 0) {
        unsigned long long t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        const uint64_t b = blockIdx.x + static_cast<uint64_t>(gridDim.x) * (blockIdx.y + static_cast<uint64_t>(gridDim.y) * blockIdx.z);
        slots[b * phases + phase] = t;
    }
}
#endif
#define RAD_PHASE(slots, phases, phase) ::gpu::gpu_phase((slots), (phases), (phase))
// Passes of a stretch a kernel repeats in the measuring build, stamping after each: the second
// runs the same instructions from a warm instruction cache.
constexpr int kPhasePasses = 2;
#else
constexpr int kPhasePasses = 1;
#define RAD_PHASE(slots, phases, phase) ((void)0)
#endif

}  // namespace gpu
