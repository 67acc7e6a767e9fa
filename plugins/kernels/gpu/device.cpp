// device.cpp: the card libgpu brings (RadDeviceApi) and the machine check at rad_plugin_open.
// A machine without a card, or without a working driver, is declined, so the engine plans on
// the host there instead of failing.
#include <radiance/kernels/gpu_runtime.h>
#include <radiance/rad_plugin.h>

#include <cstdio>
#include <string>
#include <thread>

#include "gpu_kernels.h"

namespace gpu {
namespace {

thread_local std::string g_error = "no error";
gpuDeviceProp g_prop{};
char g_name[256] = "";

int check(gpuError_t e, const char* what) {
    if (e == gpuSuccess) return RAD_OK;
    g_error = std::string(what) + ": " + gpuGetErrorString(e);
    return RAD_E_INTERNAL;
}

int mem_free(uint64_t* free_bytes) {
    size_t f = 0, t = 0;
    int rc = check(gpuMemGetInfo(&f, &t), "cudaMemGetInfo");
    *free_bytes = f;
    return rc;
}
void* alloc(uint64_t bytes) {
    void* p = nullptr;
    return check(gpuMalloc(&p, bytes), "allocating device memory") == RAD_OK ? p : nullptr;
}
void release(void* p) { gpuFree(p); }
void* alloc_host(uint64_t bytes) {
    void* p = nullptr;
    return check(gpuHostAlloc(&p, bytes), "allocating page-locked host memory") == RAD_OK ? p : nullptr;
}
void release_host(void* p) { gpuFreeHost(p); }
RadStream stream_create() {
    gpuStream_t s = nullptr;
    return check(gpuStreamCreate(&s), "creating a stream") == RAD_OK ? reinterpret_cast<RadStream>(s) : nullptr;
}
void stream_destroy(RadStream s) { gpuStreamDestroy(reinterpret_cast<gpuStream_t>(s)); }
int copy(void* dst, const void* src, uint64_t bytes, int kind, RadStream s) {
    auto k = kind == RAD_COPY_H2D ? gpuMemcpyHostToDevice : kind == RAD_COPY_D2H ? gpuMemcpyDeviceToHost : gpuMemcpyDeviceToDevice;
    return check(gpuMemcpyAsync(dst, src, bytes, k, reinterpret_cast<gpuStream_t>(s)), "copying");
}
int fill(void* dst, int byte, uint64_t bytes, RadStream s) {
    return check(gpuMemsetAsync(dst, byte, bytes, reinterpret_cast<gpuStream_t>(s)), "filling device memory");
}
// Waits for a stream's work or an event. With a rank group's collectives on the card the wait
// polls instead of blocking, so a group torn down meanwhile (a peer died) gets its transports
// aborted and the step fails, not hangs.
template <class Handle>
int wait_done(Handle h, gpuError_t (*block)(Handle), gpuError_t (*query)(Handle)) {
    if (!collectives_live()) {
        if (int rc = check(block(h), "running the queued work"); rc != RAD_OK) return rc;
        return check(gpuGetLastError(), "a kernel");
    }
    bool aborted = false;
    for (unsigned spins = 0;; ++spins) {
        const gpuError_t e = query(h);
        if (e == gpuSuccess) break;
        if (e != gpuErrorNotReady) return check(e, "running the queued work");
        if (!aborted && (spins & 63u) == 0) aborted = collectives_abort_if_torn_down();
        if (spins > 256) std::this_thread::yield();
    }
    if (aborted) {
        g_error = collectives_error();
        return RAD_E_INTERNAL;
    }
    return check(gpuGetLastError(), "a kernel");
}
int sync(RadStream s) { return wait_done(reinterpret_cast<gpuStream_t>(s), gpuStreamSynchronize, gpuStreamQuery); }
void* mark_create() {
    gpuEvent_t e = nullptr;
    return check(gpuEventCreateNoTiming(&e), "creating an event") == RAD_OK ? static_cast<void*>(e) : nullptr;
}
void mark_destroy(void* m) { gpuEventDestroy(static_cast<gpuEvent_t>(m)); }
int mark_record(void* m, RadStream s) {
    return check(gpuEventRecord(static_cast<gpuEvent_t>(m), reinterpret_cast<gpuStream_t>(s)), "recording an event");
}
int mark_wait(void* m) { return wait_done(static_cast<gpuEvent_t>(m), gpuEventSynchronize, gpuEventQuery); }
int graph_begin(RadStream s) { return check(gpuStreamBeginCapture(reinterpret_cast<gpuStream_t>(s)), "starting a graph capture"); }
int graph_end(RadStream s, void** out) {
    gpuGraph_t g = nullptr;
    *out = nullptr;
    if (int rc = check(gpuStreamEndCapture(reinterpret_cast<gpuStream_t>(s), &g), "ending a graph capture"); rc != RAD_OK) return rc;
    gpuGraphExec_t e = nullptr;
    int rc = check(gpuGraphInstantiate(&e, g), "instantiating a graph");
    gpuGraphDestroy(g);
    if (rc == RAD_OK) *out = e;
    return rc;
}
int graph_launch(void* g, RadStream s) {
    return check(gpuGraphLaunch(static_cast<gpuGraphExec_t>(g), reinterpret_cast<gpuStream_t>(s)), "launching a graph");
}
void graph_destroy(void* g) { gpuGraphExecDestroy(static_cast<gpuGraphExec_t>(g)); }
const char* last_error() { return g_error.c_str(); }

RadDeviceApi g_api = {sizeof(RadDeviceApi),
                      0,
                      GPU_RUNTIME_NAME,
                      g_name,
                      0,
                      0,
                      0,
                      mem_free,
                      alloc,
                      release,
                      alloc_host,
                      release_host,
                      stream_create,
                      stream_destroy,
                      copy,
                      fill,
                      sync,
                      graph_begin,
                      graph_end,
                      graph_launch,
                      graph_destroy,
                      last_error,
                      {}};
bool g_open = false;

}  // namespace

// Binds the card for `ordinal` (taken modulo the cards this process sees).
int open_device(const RadMachine* m) {
    int count = 0;
    if (gpuGetDeviceCount(&count) != gpuSuccess || count <= 0) {
        gpuGetLastError();  // clear the sticky "no device" error
        return RAD_E_UNSUPPORTED;
    }
    const int ordinal = (m && m->struct_size >= sizeof(RadMachine) && m->device_ordinal > 0) ? m->device_ordinal % count : 0;
    if (gpuSetDevice(ordinal) != gpuSuccess || gpuGetDeviceProperties(&g_prop, ordinal) != gpuSuccess) return RAD_E_UNSUPPORTED;
#if RAD_GPU_CUDA
    if (g_prop.major < 9) return RAD_E_UNSUPPORTED;  // this build carries sm_90a code only
#endif
    std::snprintf(g_name, sizeof g_name, "%s", g_prop.name);
    g_api.ordinal = ordinal;
    g_api.cc = g_prop.major * 10 + g_prop.minor;
    g_api.multiprocessors = g_prop.multiProcessorCount;
    g_api.memory_bytes = g_prop.totalGlobalMem;
    // The longest run of cards 0..k-1 that all reach each other (tensor-parallel rank r binds r).
    int peers = 1;
    for (int k = 1; k < count; ++k) {
        bool all = true;
        for (int j = 0; j < k && all; ++j) {
            int ab = 0, ba = 0;
            all = gpuDeviceCanAccessPeer(&ab, j, k) == gpuSuccess && gpuDeviceCanAccessPeer(&ba, k, j) == gpuSuccess && ab && ba;
        }
        if (!all) break;
        peers = k + 1;
    }
    g_api.peer_cards = peers;
    g_api.cards = count;
    g_api.mark_create = mark_create;
    g_api.mark_destroy = mark_destroy;
    g_api.mark_record = mark_record;
    g_api.mark_wait = mark_wait;
    g_open = true;
    return RAD_OK;
}

const RadDeviceApi* device_api() { return g_open ? &g_api : nullptr; }
int sm_count() { return g_prop.multiProcessorCount; }
uint64_t smem_per_sm() {
#if RAD_GPU_CUDA
    return g_prop.sharedMemPerMultiprocessor;
#else
    return g_prop.maxSharedMemoryPerMultiProcessor;  // HIP's name for it
#endif
}

}  // namespace gpu
