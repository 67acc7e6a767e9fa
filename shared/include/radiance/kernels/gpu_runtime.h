// gpu_runtime.h: the CUDA/HIP common dialect device libraries are written in.
//
// One source builds with nvcc for NVIDIA cards and with clang -x hip for AMD ones. Kernels and
// their host wrappers use only the names below; what differs between the two runtimes (warp
// shuffles take a mask on CUDA, bf16 types have other names, warps are 32 or 64 wide) is decided
// here once. RDNA cards (gfx11, gfx12) run HIP in wave32, so kWarpSize is 32 on every target this
// project builds for; code that depends on the width reads kWarpSize, never a literal.
#pragma once
#include <cstdint>

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
// bf16: newer ROCm has hip/hip_bf16.h (__hip_bfloat16, CUDA-style conversions); ROCm 5.2, what
// Debian 12's libamdhip64-dev ships, has only hip/hip_bfloat16.h (struct hip_bfloat16, whose
// float constructor rounds to nearest even). Both are 16-bit standard-layout types.
#if __has_include(<hip/hip_bf16.h>)
#include <hip/hip_bf16.h>
#define RAD_GPU_HIP_BF16 1
#else
#include <hip/hip_bfloat16.h>
#define RAD_GPU_HIP_BF16 0
#endif
#define RAD_GPU_HIP 1
using gpuError_t = hipError_t;
using gpuStream_t = hipStream_t;
using gpuGraph_t = hipGraph_t;
using gpuGraphExec_t = hipGraphExec_t;
#if RAD_GPU_HIP_BF16
using gpu_bf16 = __hip_bfloat16;
#else
using gpu_bf16 = hip_bfloat16;
#endif
using gpu_f16 = __half;
using gpuDeviceProp = hipDeviceProp_t;
#define gpuSuccess hipSuccess
#define gpuMalloc hipMalloc
#define gpuFree hipFree
#define gpuHostAlloc(p, n) hipHostMalloc((p), (n), hipHostMallocDefault)
#define gpuFreeHost hipHostFree
#define gpuMemcpyAsync hipMemcpyAsync
#define gpuMemcpy2DAsync hipMemcpy2DAsync
#define gpuMemsetAsync hipMemsetAsync
#define gpuMemcpyHostToDevice hipMemcpyHostToDevice
#define gpuMemcpyDeviceToHost hipMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define gpuMemGetInfo hipMemGetInfo
#define gpuStreamCreate hipStreamCreate
#define gpuStreamDestroy hipStreamDestroy
#define gpuStreamSynchronize hipStreamSynchronize
#define gpuStreamBeginCapture(s) hipStreamBeginCapture((s), hipStreamCaptureModeThreadLocal)
#define gpuStreamEndCapture hipStreamEndCapture
#define gpuGraphInstantiate(e, g) hipGraphInstantiate((e), (g), nullptr, nullptr, 0)
#define gpuGraphLaunch hipGraphLaunch
#define gpuGraphDestroy hipGraphDestroy
#define gpuGraphExecDestroy hipGraphExecDestroy
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuSetDevice hipSetDevice
#define gpuGetLastError hipGetLastError
#define gpuGetErrorString hipGetErrorString
#define gpuFuncSetAttribute(f, a, v) hipFuncSetAttribute(reinterpret_cast<const void*>(f), a, v)
#define gpuFuncAttributeMaxDynamicSharedMemorySize hipFuncAttributeMaxDynamicSharedMemorySize
#define gpuStreamQuery hipStreamQuery
#define gpuErrorNotReady hipErrorNotReady
using gpuEvent_t = hipEvent_t;
#define gpuEventCreateNoTiming(e) hipEventCreateWithFlags((e), hipEventDisableTiming)
#define gpuEventDestroy hipEventDestroy
#define gpuEventRecord hipEventRecord
#define gpuEventSynchronize hipEventSynchronize
#define gpuEventQuery hipEventQuery
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuMemset hipMemset
#define gpuMemcpy hipMemcpy
#define gpuDeviceSynchronize hipDeviceSynchronize
#define gpuStreamIsCapturing hipStreamIsCapturing
#define gpuStreamCaptureStatus hipStreamCaptureStatus
#define gpuStreamCaptureStatusNone hipStreamCaptureStatusNone
#define gpuStreamCaptureStatusActive hipStreamCaptureStatusActive
#define gpuHostAllocMapped(p, n) hipHostMalloc((p), (n), hipHostMallocMapped)
#define gpuHostGetDevicePointer(d, h) hipHostGetDevicePointer((d), (h), 0)
using gpuIpcMemHandle_t = hipIpcMemHandle_t;
#define gpuIpcGetMemHandle hipIpcGetMemHandle
#define gpuIpcOpenMemHandle(p, h) hipIpcOpenMemHandle((p), (h), hipIpcMemLazyEnablePeerAccess)
#define gpuIpcCloseMemHandle hipIpcCloseMemHandle
#define GPU_RUNTIME_NAME "hip"
#else
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#define RAD_GPU_CUDA 1
using gpuError_t = cudaError_t;
using gpuStream_t = cudaStream_t;
using gpuGraph_t = cudaGraph_t;
using gpuGraphExec_t = cudaGraphExec_t;
using gpu_bf16 = __nv_bfloat16;
using gpu_f16 = __half;
using gpuDeviceProp = cudaDeviceProp;
#define gpuSuccess cudaSuccess
#define gpuMalloc cudaMalloc
#define gpuFree cudaFree
#define gpuHostAlloc(p, n) cudaHostAlloc((p), (n), cudaHostAllocDefault)
#define gpuFreeHost cudaFreeHost
#define gpuMemcpyAsync cudaMemcpyAsync
#define gpuMemcpy2DAsync cudaMemcpy2DAsync
#define gpuMemsetAsync cudaMemsetAsync
#define gpuMemcpyHostToDevice cudaMemcpyHostToDevice
#define gpuMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define gpuMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define gpuMemGetInfo cudaMemGetInfo
#define gpuStreamCreate cudaStreamCreate
#define gpuStreamDestroy cudaStreamDestroy
#define gpuStreamSynchronize cudaStreamSynchronize
#define gpuStreamBeginCapture(s) cudaStreamBeginCapture((s), cudaStreamCaptureModeThreadLocal)
#define gpuStreamEndCapture cudaStreamEndCapture
#define gpuGraphInstantiate(e, g) cudaGraphInstantiate((e), (g), 0)
#define gpuGraphLaunch cudaGraphLaunch
#define gpuGraphDestroy cudaGraphDestroy
#define gpuGraphExecDestroy cudaGraphExecDestroy
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuSetDevice cudaSetDevice
#define gpuGetLastError cudaGetLastError
#define gpuGetErrorString cudaGetErrorString
#define gpuFuncSetAttribute(f, a, v) cudaFuncSetAttribute((f), a, v)
#define gpuFuncAttributeMaxDynamicSharedMemorySize cudaFuncAttributeMaxDynamicSharedMemorySize
#define gpuStreamQuery cudaStreamQuery
#define gpuErrorNotReady cudaErrorNotReady
using gpuEvent_t = cudaEvent_t;
#define gpuEventCreateNoTiming(e) cudaEventCreateWithFlags((e), cudaEventDisableTiming)
#define gpuEventDestroy cudaEventDestroy
#define gpuEventRecord cudaEventRecord
#define gpuEventSynchronize cudaEventSynchronize
#define gpuEventQuery cudaEventQuery
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuMemset cudaMemset
#define gpuMemcpy cudaMemcpy
#define gpuDeviceSynchronize cudaDeviceSynchronize
#define gpuStreamIsCapturing cudaStreamIsCapturing
#define gpuStreamCaptureStatus cudaStreamCaptureStatus
#define gpuStreamCaptureStatusNone cudaStreamCaptureStatusNone
#define gpuStreamCaptureStatusActive cudaStreamCaptureStatusActive
#define gpuHostAllocMapped(p, n) cudaHostAlloc((p), (n), cudaHostAllocMapped)
#define gpuHostGetDevicePointer(d, h) cudaHostGetDevicePointer((d), (h), 0)
using gpuIpcMemHandle_t = cudaIpcMemHandle_t;
#define gpuIpcGetMemHandle cudaIpcGetMemHandle
#define gpuIpcOpenMemHandle(p, h) cudaIpcOpenMemHandle((p), (h), cudaIpcMemLazyEnablePeerAccess)
#define gpuIpcCloseMemHandle cudaIpcCloseMemHandle
#define GPU_RUNTIME_NAME "cuda"
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
constexpr int kWarpSize = 32;
#if defined(__HIP_DEVICE_COMPILE__) && defined(__AMDGCN_WAVEFRONT_SIZE__)
static_assert(__AMDGCN_WAVEFRONT_SIZE__ == kWarpSize, "libgpu's HIP targets run wave32 (RDNA); no -mwavefrontsize64");
#endif

// Every lane of the warp takes part (CUDA's full mask; HIP's shuffles have none).
template <typename T>
__device__ __forceinline__ T gpu_shfl_xor(T v, int lane_mask) {
#if RAD_GPU_HIP
    return __shfl_xor(v, lane_mask, kWarpSize);
#else
    return __shfl_xor_sync(0xffffffffu, v, lane_mask, kWarpSize);
#endif
}

// Every lane gets lane src's value.
template <typename T>
__device__ __forceinline__ T gpu_shfl(T v, int src) {
#if RAD_GPU_HIP
    return __shfl(v, src, kWarpSize);
#else
    return __shfl_sync(0xffffffffu, v, src, kWarpSize);
#endif
}

// Lane l gets lane l - delta's value (lanes below delta keep their own).
template <typename T>
__device__ __forceinline__ T gpu_shfl_up(T v, int delta) {
#if RAD_GPU_HIP
    return __shfl_up(v, delta, kWarpSize);
#else
    return __shfl_up_sync(0xffffffffu, v, delta, kWarpSize);
#endif
}

// Bit l set where lane l's predicate holds (libgpu's HIP targets run wave32: the low 32 bits).
__device__ __forceinline__ uint32_t gpu_ballot(bool pred) {
#if RAD_GPU_HIP
    return static_cast<uint32_t>(__ballot(pred));
#else
    return __ballot_sync(0xffffffffu, pred);
#endif
}

__device__ __forceinline__ float gpu_warp_sum(float v) {
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) v += gpu_shfl_xor(v, m);
    return v;
}
__device__ __forceinline__ float gpu_warp_max(float v) {
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) v = fmaxf(v, gpu_shfl_xor(v, m));
    return v;
}

// Programmatic dependent launch (Hopper and later): a kernel started with gpu_launch may be
// scheduled while the kernel before it drains. Every such kernel calls gpu_grid_wait() before it
// touches memory an earlier kernel writes or reads (it returns once the previous grid has
// completed and its writes are visible; only what no kernel of the step writes, such as weights
// and the step's own inputs, may be read before it), then gpu_grid_release() so the next kernel
// may be scheduled as soon as all of this grid's blocks are running. Elsewhere both are no-ops
// and gpu_launch is a plain launch.
__device__ __forceinline__ void gpu_grid_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void gpu_grid_release() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// A load served by L2, the point where a completed grid's writes are visible, never from a line
// an SM's L1 kept from an earlier kernel: for what a kernel reads before gpu_grid_wait that a
// kernel two launches back wrote. (HIP launches never overlap, so a plain load there.)
__device__ __forceinline__ float gpu_load_l2(const float* p) {
#if RAD_GPU_CUDA
    return __ldcg(p);
#else
    return *p;
#endif
}

#if RAD_GPU_CUDA
// A launch that may be scheduled while the kernel before it drains (attr: its one attribute).
inline cudaLaunchConfig_t gpu_pdl_config(dim3 grid, dim3 block, size_t smem, gpuStream_t s, cudaLaunchAttribute* attr) {
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr->val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}
#endif

#include "gpu_timeline.h"

template <typename... P, typename... A>
inline gpuError_t gpu_launch(void (*kernel)(P...), dim3 grid, dim3 block, size_t smem, gpuStream_t s, A&&... args) {
#if RAD_GPU_CUDA
    cudaLaunchAttribute attr;
    const cudaLaunchConfig_t cfg = gpu_pdl_config(grid, block, smem, s, &attr);
    const gpuError_t rc = cudaLaunchKernelEx(&cfg, kernel, static_cast<P>(args)...);
    gpu_timeline::after_launch(reinterpret_cast<const void*>(kernel), s);  // RADIANCE_GPU_TIMELINE only
    return rc;
#else
    hipLaunchKernelGGL(kernel, grid, block, smem, s, static_cast<P>(args)...);
    return hipGetLastError();
#endif
}

// bf16 and f16 widen exactly; f32 -> bf16 narrows round-to-nearest-even, as the reference does.
__device__ __forceinline__ float gpu_to_f32(float v) { return v; }
__device__ __forceinline__ float gpu_to_f32(gpu_f16 v) { return __half2float(v); }
__device__ __forceinline__ gpu_f16 gpu_f32_to_f16(float v) { return __float2half_rn(v); }
#if RAD_GPU_CUDA
__device__ __forceinline__ float gpu_to_f32(gpu_bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ gpu_bf16 gpu_f32_to_bf16(float v) { return __float2bfloat16_rn(v); }
#elif RAD_GPU_HIP_BF16
__device__ __forceinline__ float gpu_to_f32(gpu_bf16 v) { return __bfloat162float(v); }
__device__ __forceinline__ gpu_bf16 gpu_f32_to_bf16(float v) { return __float2bfloat16(v); }  // RNE on HIP
#else
__device__ __forceinline__ float gpu_to_f32(gpu_bf16 v) { return static_cast<float>(v); }
__device__ __forceinline__ gpu_bf16 gpu_f32_to_bf16(float v) { return hip_bfloat16::round_to_bfloat16(v); }
#endif
#endif
