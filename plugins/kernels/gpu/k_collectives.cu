// k_collectives.cu: all_reduce and all_gather between the worker processes of one host, one card
// per rank. Three transports, one row each (exports.cpp), best first:
//
//  - peer memory (device.p2p == 1): every rank maps every other rank's exchange buffer (IPC
//    handles traded through the engine's host-staging slots). One kernel copies this rank's rows
//    into its buffer, raises its flag in every peer and waits for theirs, then reads all ranks'
//    rows over NVLink and adds them in rank order: one launch, no host involvement, so a decode
//    step that holds it can be recorded as a graph. Two halves alternate by epoch, so a rank one
//    call ahead never overwrites rows a peer is still reading.
//  - NCCL (built where nccl.h is found): a communicator per generation of the group, its unique id
//    traded through the staging slots, created non-blocking so a dead peer cannot hang the setup.
//  - host staging: rows travel to the host and the ranks add them through the shared-memory
//    communicator (rad_host_collectives.h: the same bytes libref and libcpu produce). Its launch
//    waits for the queue, so steps holding it are never recorded.
//
// A group is one generation of the engine's communicator (a new generation maps new staging after
// a rank restarted): the first launch in a new one tears the old transports down and builds new
// ones. While the host waits for the queue (device.cpp's sync), a group that was torn down
// (RadComm.aborted) has its transports aborted, so a step whose peer died fails instead of hanging.
#include <radiance/kernels/rad_host_collectives.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#if RAD_GPU_NCCL
#include <nccl.h>
#endif

#include "k_common.h"

namespace gpu {

namespace {

constexpr int kMaxRanks = 8;
constexpr int64_t kCtlBytes = 4096;                // control words at the head of each exchange buffer
constexpr int64_t kHalfBytes = int64_t{32} << 20;  // each of the two alternating halves
constexpr int kThreads = 512;

// The head of a rank's exchange buffer. flags[k] is written by rank k (over NVLink) with the
// epoch of the call it reached; epoch and arrive are this rank's own.
struct Ctl {
    uint32_t epoch;
    uint32_t arrive;
    uint32_t pad[62];
    uint32_t flags[kMaxRanks];
};
static_assert(sizeof(Ctl) <= kCtlBytes, "control words fit their page");

struct PeerView {
    char* base[kMaxRanks];      // every rank's exchange buffer as mapped in this process
    const volatile int* abort;  // host-mapped: 1 once the group was torn down
    int rank, world;
};

struct Group {
    const void* staging = nullptr;  // the generation's identity
    RadComm* comm = nullptr;
    bool broken = false;
    char* local = nullptr;  // this rank's exchange buffer
    int* abort_host = nullptr;
    PeerView view{};
#if RAD_GPU_NCCL
    ncclComm_t nccl = nullptr;
#endif
};
Group g_group;
std::string g_why;

// ---- kernels ------------------------------------------------------------------------------

__device__ __forceinline__ uint32_t load_volatile(const uint32_t* p) { return *reinterpret_cast<const volatile uint32_t*>(p); }
__device__ __forceinline__ void store_volatile(uint32_t* p, uint32_t v) { *reinterpret_cast<volatile uint32_t*>(p) = v; }

// Every block has written its share of this rank's rows: the last block to arrive publishes the
// epoch to every rank, then every block waits until every rank published it. False when the group
// was torn down while waiting (the rows are then left as they were).
__device__ bool peers_meet(const PeerView& v, uint32_t e) {
    __shared__ int ok;
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        Ctl* me = reinterpret_cast<Ctl*>(v.base[v.rank]);
        ok = 1;
        if (atomicAdd(&me->arrive, 1u) == gridDim.x - 1) {
            me->arrive = 0;
            store_volatile(&me->epoch, e);
            __threadfence_system();
            for (int k = 0; k < v.world; ++k) store_volatile(&reinterpret_cast<Ctl*>(v.base[k])->flags[v.rank], e);
        }
        for (int k = 0; k < v.world && ok; ++k) {
            uint32_t spins = 0;
            while (static_cast<int32_t>(load_volatile(&me->flags[k]) - e) < 0) {
                if ((++spins & 1023u) == 0 && *v.abort) {
                    ok = 0;
                    break;
                }
            }
        }
        __threadfence_system();
    }
    __syncthreads();
    return ok != 0;
}

__device__ __forceinline__ float* half_of(const PeerView& v, int k, uint32_t e, int64_t half_floats) {
    return reinterpret_cast<float*>(v.base[k] + kCtlBytes) + (e & 1u) * half_floats;
}

// x[rows, dim] (row pitch xp floats) = sum over ranks in rank order. VN floats per access.
template <int VN>
__global__ void __launch_bounds__(kThreads)
    k_p2p_all_reduce(float* x, int64_t xp, uint32_t rows, uint32_t dim, PeerView v, int64_t half_floats) {
    gpu_grid_wait();
    using V = typename std::conditional<VN == 4, float4, float>::type;
    const uint32_t e = load_volatile(&reinterpret_cast<Ctl*>(v.base[v.rank])->epoch) + 1;
    const uint32_t cols = dim / VN, total = rows * cols;
    V* mine = reinterpret_cast<V*>(half_of(v, v.rank, e, half_floats));
    const uint32_t t0 = blockIdx.x * blockDim.x + threadIdx.x, step = gridDim.x * blockDim.x;
    for (uint32_t i = t0; i < total; i += step) mine[i] = reinterpret_cast<const V*>(x + (i / cols) * xp)[i % cols];
    if (peers_meet(v, e)) {
        for (uint32_t i = t0; i < total; i += step) {
            V s = reinterpret_cast<const V*>(half_of(v, 0, e, half_floats))[i];
            for (int k = 1; k < v.world; ++k) {
                const V t = reinterpret_cast<const V*>(half_of(v, k, e, half_floats))[i];
                if constexpr (VN == 4) {
                    s.x += t.x;
                    s.y += t.y;
                    s.z += t.z;
                    s.w += t.w;
                } else {
                    s += t;
                }
            }
            reinterpret_cast<V*>(x + (i / cols) * xp)[i % cols] = s;
        }
    }
    gpu_grid_release();
}

// y[rows, span(k)] = x of rank k, spans r * total / world .. (r + 1) * total / world.
__global__ void __launch_bounds__(kThreads)
    k_p2p_all_gather(const float* x, int64_t xp, float* y, int64_t yp, uint32_t rows, uint32_t total, PeerView v, int64_t half_floats) {
    gpu_grid_wait();
    const uint32_t e = load_volatile(&reinterpret_cast<Ctl*>(v.base[v.rank])->epoch) + 1;
    const uint32_t t0 = blockIdx.x * blockDim.x + threadIdx.x, step = gridDim.x * blockDim.x;
    auto span = [&](int k, uint32_t& lo, uint32_t& w) {
        lo = static_cast<uint32_t>(static_cast<uint64_t>(k) * total / v.world);
        w = static_cast<uint32_t>(static_cast<uint64_t>(k + 1) * total / v.world) - lo;
    };
    uint32_t lo, w;
    span(v.rank, lo, w);
    float* mine = half_of(v, v.rank, e, half_floats);
    for (uint32_t i = t0; i < rows * w; i += step) mine[i] = x[(i / w) * xp + i % w];
    if (peers_meet(v, e)) {
        for (int k = 0; k < v.world; ++k) {
            span(k, lo, w);
            const float* theirs = half_of(v, k, e, half_floats);
            for (uint32_t i = t0; i < rows * w; i += step) y[(i / w) * yp + lo + i % w] = theirs[i];
        }
    }
    gpu_grid_release();
}

// ---- the group ------------------------------------------------------------------------------

int fail(const std::string& why, int rc = RAD_E_INTERNAL) {
    g_why = why;
    return rc;
}

// Every rank hands in `len` bytes and gets every rank's, in rank order, through the staging slots.
int exchange(RadComm* c, const void* mine, size_t len, std::vector<char>& all) {
    if (!c->staging || !c->barrier || c->slot_bytes < len) return fail("the communicator has no staging slots", RAD_E_UNSUPPORTED);
    std::memcpy(static_cast<char*>(c->staging) + static_cast<uint64_t>(c->rank) * c->slot_bytes, mine, len);
    if (int rc = c->barrier(c); rc != RAD_OK) return fail("a peer left while the group was being set up", rc);
    all.resize(len * static_cast<size_t>(c->world));
    for (int k = 0; k < c->world; ++k)
        std::memcpy(all.data() + len * k, static_cast<const char*>(c->staging) + static_cast<uint64_t>(k) * c->slot_bytes, len);
    if (int rc = c->barrier(c); rc != RAD_OK) return fail("a peer left while the group was being set up", rc);
    return RAD_OK;
}

void teardown(Group& g) {
#if RAD_GPU_NCCL
    if (g.nccl) ncclCommAbort(g.nccl);  // abort, not destroy: a peer of this generation may be gone
#endif
    for (int k = 0; k < g.view.world; ++k)
        if (k != g.view.rank && g.view.base[k]) gpuIpcCloseMemHandle(g.view.base[k]);
    if (g.local) gpuFree(g.local);
    if (g.abort_host) gpuFreeHost(g.abort_host);
    g = Group{};
}

bool capturing(gpuStream_t s) {
#if RAD_GPU_CUDA
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    return cudaStreamIsCapturing(s, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone;
#else
    hipStreamCaptureStatus st = hipStreamCaptureStatusNone;
    return hipStreamIsCapturing(s, &st) == hipSuccess && st != hipStreamCaptureStatusNone;
#endif
}

// The group of this launch's generation; null (and g_why) when it cannot serve.
Group* group_of(const RadArgs* a) {
    auto* c = static_cast<RadComm*>(a->comm);
    if (!c || c->world > kMaxRanks) return fail("no communicator for a group of at most 8 ranks"), nullptr;
    if (g_group.staging != c->staging) {
        teardown(g_group);
        g_group.staging = c->staging;
        g_group.comm = c;
        g_group.view.rank = c->rank;
        g_group.view.world = c->world;
    }
    if (g_group.broken) return fail("this generation of the rank group was torn down (a peer left)"), nullptr;
    return &g_group;
}

// Maps every rank's exchange buffer (once per generation; never while a graph is being recorded).
int peers_ready(Group& g, gpuStream_t s) {
    if (g.local) return RAD_OK;
    if (capturing(s)) return fail("peer buffers must be set up outside a graph capture");
    RadComm* c = g.comm;
    void* p = nullptr;
    if (gpuMalloc(&p, static_cast<size_t>(kCtlBytes + 2 * kHalfBytes)) != gpuSuccess)
        return fail("allocating the exchange buffer", RAD_E_NOMEM);
    g.local = static_cast<char*>(p);
    void* h = nullptr;
    if (gpuMemset(g.local, 0, static_cast<size_t>(kCtlBytes)) != gpuSuccess || gpuHostAllocMapped(&h, 64) != gpuSuccess)
        return fail("preparing the exchange buffer");
    g.abort_host = static_cast<int*>(h);
    *g.abort_host = 0;
    void* d = nullptr;
    if (gpuHostGetDevicePointer(&d, h) != gpuSuccess) return fail("mapping the abort word");
    g.view.abort = static_cast<const volatile int*>(d);
    gpuIpcMemHandle_t mine{};
    if (gpuIpcGetMemHandle(&mine, g.local) != gpuSuccess) return fail("exporting the exchange buffer");
    if (gpuStreamSynchronize(s) != gpuSuccess) return fail("clearing the exchange buffer");
    std::vector<char> all;
    if (int rc = exchange(c, &mine, sizeof mine, all); rc != RAD_OK) return rc;
    for (int k = 0; k < c->world; ++k) {
        if (k == c->rank) {
            g.view.base[k] = g.local;
            continue;
        }
        gpuIpcMemHandle_t theirs{};
        std::memcpy(&theirs, all.data() + sizeof theirs * k, sizeof theirs);
        void* q = nullptr;
        if (gpuIpcOpenMemHandle(&q, theirs) != gpuSuccess) return fail("mapping rank " + std::to_string(k) + "'s exchange buffer");
        g.view.base[k] = static_cast<char*>(q);
    }
    // Every rank mapped every buffer before any flag is raised in one.
    std::vector<char> none;
    const char ok = 1;
    return exchange(c, &ok, 1, none);
}

// This launch's group with its transport (peers_ready or nccl_ready) set up; null and *rc otherwise.
// A set-up that failed part way leaves the generation broken: its half-made transport is never
// used, and the next generation starts clean.
template <typename Ready>
Group* ready_group(const RadArgs* a, Ready ready, int* rc) {
    Group* g = group_of(a);
    if (!g) {
        *rc = RAD_E_INTERNAL;
        return nullptr;
    }
    *rc = ready(*g, stream_of(a));
    if (*rc != RAD_OK) g->broken = true;
    return *rc == RAD_OK ? g : nullptr;
}

unsigned grid_for(uint64_t items) {
    const uint64_t want = (items + kThreads - 1) / kThreads;
    const uint64_t cap = static_cast<uint64_t>(sm_count() > 0 ? sm_count() : 1);  // one block per SM: all co-resident
    return static_cast<unsigned>(want < 1 ? 1 : want < cap ? want : cap);
}

#if RAD_GPU_NCCL
int nccl_wait(Group& g, ncclResult_t r, const char* what) {
    while (r == ncclInProgress) {
        if (g.comm->aborted && g.comm->aborted(g.comm)) {
            g.broken = true;
            return fail(std::string(what) + ": a peer left");
        }
        ncclCommGetAsyncError(g.nccl, &r);
    }
    return r == ncclSuccess ? RAD_OK : fail(std::string(what) + ": " + ncclGetErrorString(r));
}

int nccl_ready(Group& g, gpuStream_t s) {
    if (g.nccl) return RAD_OK;
    if (capturing(s)) return fail("the NCCL communicator must be set up outside a graph capture");
    ncclUniqueId id{};
    if (g.comm->rank == 0 && ncclGetUniqueId(&id) != ncclSuccess) return fail("ncclGetUniqueId failed");
    std::vector<char> all;
    if (int rc = exchange(g.comm, &id, sizeof id, all); rc != RAD_OK) return rc;
    std::memcpy(&id, all.data(), sizeof id);  // rank 0's
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = 0;
    ncclResult_t r = ncclCommInitRankConfig(&g.nccl, g.comm->world, id, g.comm->rank, &cfg);
    return nccl_wait(g, r, "creating the NCCL communicator");
}
#endif

// Host staging for one pitched tensor: rows to the host, `op` through the staging slots, back.
template <typename Op>
int staged(const RadArgs* a, const RadTensor* in, RadTensor* out, int64_t in_cols, int64_t out_cols, Op op) {
    const int64_t n = rad_args_geti(a, "n");
    thread_local std::vector<float> hin, hout;
    hin.resize(static_cast<size_t>(n * in_cols));
    hout.resize(static_cast<size_t>(n * out_cols));
    gpuStream_t s = stream_of(a);
    const size_t ip = static_cast<size_t>(rad_tensor_row_pitch(in)), op_ = static_cast<size_t>(rad_tensor_row_pitch(out));
    if (gpuMemcpy2DAsync(hin.data(), static_cast<size_t>(in_cols) * 4, in->data, ip, static_cast<size_t>(in_cols) * 4,
                         static_cast<size_t>(n), gpuMemcpyDeviceToHost, s) != gpuSuccess ||
        gpuStreamSynchronize(s) != gpuSuccess)
        return RAD_E_INTERNAL;
    RadTensor h[2] = {*in, *out};
    h[0].data = hin.data();
    h[0].row_pitch = in_cols * 4;
    h[1].data = hout.data();
    h[1].row_pitch = out_cols * 4;
    RadArgs ha = *a;
    ha.t = h;
    if (int rc = op(&ha); rc != RAD_OK) return rc;
    const float* back = in == out ? hin.data() : hout.data();
    if (gpuMemcpy2DAsync(out->data, op_, back, static_cast<size_t>(out_cols) * 4, static_cast<size_t>(out_cols) * 4, static_cast<size_t>(n),
                         gpuMemcpyHostToDevice, s) != gpuSuccess ||
        gpuStreamSynchronize(s) != gpuSuccess)  // the host rows are reused by the next launch
        return RAD_E_INTERNAL;
    return RAD_OK;
}

int64_t span_lo(int64_t r, int64_t total, int64_t world) { return r * total / world; }

}  // namespace

// ---- rows -----------------------------------------------------------------------------------

int all_reduce_staged(const RadArgs* a) {
    RadTensor* x = rad_arg_out(a, 0);
    if (!x || x->dtype != RAD_F32) return RAD_E_DTYPE;
    const RadComm* c = static_cast<const RadComm*>(a->comm);
    if (!c || c->world <= 1) return RAD_OK;
    const int64_t dim = rad_args_geti(a, "dim");
    return staged(a, x, x, dim, dim, [](const RadArgs* h) {
        RadArgs one = *h;
        one.n_t = 1;
        return rad_host_all_reduce_f32(&one);
    });
}

int all_gather_staged(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const RadComm* c = static_cast<const RadComm*>(a->comm);
    const int64_t total = rad_args_geti(a, "total");
    const int64_t W = c && c->world > 1 ? c->world : 1, r = W > 1 ? c->rank : 0;
    const int64_t width = span_lo(r + 1, total, W) - span_lo(r, total, W);
    return staged(a, x, y, width, total, [](const RadArgs* h) { return rad_host_all_gather_f32(h); });
}

int all_reduce_p2p(const RadArgs* a) {
    RadTensor* x = rad_arg_out(a, 0);
    if (!x || x->dtype != RAD_F32) return RAD_E_DTYPE;
    const RadComm* c0 = static_cast<const RadComm*>(a->comm);
    if (!c0 || c0->world <= 1) return RAD_OK;
    int rc = RAD_OK;
    Group* g = ready_group(a, peers_ready, &rc);
    if (!g) return rc;
    gpuStream_t s = stream_of(a);
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim"), xp = pitch_elems(x);
    const int64_t half = kHalfBytes / 4, per = half / dim;
    if (per < 1) return fail("a row is wider than the exchange buffer", RAD_E_SHAPE);
    const bool vec = dim % 4 == 0 && xp % 4 == 0 && reinterpret_cast<uintptr_t>(x->data) % 16 == 0;
    for (int64_t r0 = 0; r0 < n; r0 += per) {
        const int64_t rows = n - r0 < per ? n - r0 : per;
        float* xr = static_cast<float*>(x->data) + r0 * xp;
        const uint64_t items = static_cast<uint64_t>(rows * dim / (vec ? 4 : 1));
        if (vec)
            gpu_launch(k_p2p_all_reduce<4>, grid_for(items), kThreads, 0, s, xr, xp, static_cast<uint32_t>(rows),
                       static_cast<uint32_t>(dim), g->view, half);
        else
            gpu_launch(k_p2p_all_reduce<1>, grid_for(items), kThreads, 0, s, xr, xp, static_cast<uint32_t>(rows),
                       static_cast<uint32_t>(dim), g->view, half);
    }
    return launched();
}

int all_gather_p2p(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const RadComm* c0 = static_cast<const RadComm*>(a->comm);
    if (!c0 || c0->world <= 1) return all_gather_staged(a);  // one rank: a copy
    int rc = RAD_OK;
    Group* g = ready_group(a, peers_ready, &rc);
    if (!g) return rc;
    gpuStream_t s = stream_of(a);
    const int64_t n = rad_args_geti(a, "n"), total = rad_args_geti(a, "total"), W = c0->world;
    const int64_t widest = (total + W - 1) / W + 1, half = kHalfBytes / 4, per = half / widest;
    if (per < 1) return fail("a row is wider than the exchange buffer", RAD_E_SHAPE);
    const int64_t xp = pitch_elems(x), yp = pitch_elems(y);
    for (int64_t r0 = 0; r0 < n; r0 += per) {
        const int64_t rows = n - r0 < per ? n - r0 : per;
        gpu_launch(k_p2p_all_gather, grid_for(static_cast<uint64_t>(rows * widest)), kThreads, 0, s,
                   static_cast<const float*>(x->data) + r0 * xp, xp, static_cast<float*>(y->data) + r0 * yp, yp,
                   static_cast<uint32_t>(rows), static_cast<uint32_t>(total), g->view, half);
    }
    return launched();
}

#if RAD_GPU_NCCL
uint64_t all_reduce_nccl_scratch(const RadArgs* geom) {
    return static_cast<uint64_t>(rad_args_geti(geom, "n") * rad_args_geti(geom, "dim")) * 4;
}

int all_reduce_nccl(const RadArgs* a) {
    RadTensor* x = rad_arg_out(a, 0);
    if (!x || x->dtype != RAD_F32) return RAD_E_DTYPE;
    const RadComm* c0 = static_cast<const RadComm*>(a->comm);
    if (!c0 || c0->world <= 1) return RAD_OK;
    int rc = RAD_OK;
    Group* g = ready_group(a, nccl_ready, &rc);
    if (!g) return rc;
    gpuStream_t s = stream_of(a);
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const size_t pitch = static_cast<size_t>(rad_tensor_row_pitch(x)), row = static_cast<size_t>(dim) * 4;
    float* buf = static_cast<float*>(x->data);
    if (pitch != row) {  // NCCL wants one contiguous run: gather the rows into scratch and back
        if (a->scratch_bytes < row * static_cast<size_t>(n)) return RAD_E_NOMEM;
        buf = static_cast<float*>(a->scratch);
        gpuMemcpy2DAsync(buf, row, x->data, pitch, row, static_cast<size_t>(n), gpuMemcpyDeviceToDevice, s);
    }
    rc = nccl_wait(*g, ncclAllReduce(buf, buf, static_cast<size_t>(n * dim), ncclFloat32, ncclSum, g->nccl, s), "ncclAllReduce");
    if (rc == RAD_OK && buf != x->data) gpuMemcpy2DAsync(x->data, pitch, buf, row, row, static_cast<size_t>(n), gpuMemcpyDeviceToDevice, s);
    return rc == RAD_OK ? launched() : rc;
}

uint64_t all_gather_nccl_scratch(const RadArgs* geom) {
    return static_cast<uint64_t>(rad_args_geti(geom, "n") * rad_args_geti(geom, "total")) * 4;
}

// Uneven spans: one broadcast per rank inside a group call, each into its own run of scratch,
// then the runs are placed as y's columns.
int all_gather_nccl(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const RadComm* c0 = static_cast<const RadComm*>(a->comm);
    if (!c0 || c0->world <= 1) return all_gather_staged(a);
    int rc = RAD_OK;
    Group* g = ready_group(a, nccl_ready, &rc);
    if (!g) return rc;
    gpuStream_t s = stream_of(a);
    const int64_t n = rad_args_geti(a, "n"), total = rad_args_geti(a, "total"), W = c0->world, r = c0->rank;
    if (a->scratch_bytes < static_cast<uint64_t>(n * total) * 4) return RAD_E_NOMEM;
    auto* runs = static_cast<float*>(a->scratch);
    const size_t xp = static_cast<size_t>(rad_tensor_row_pitch(x)), yp = static_cast<size_t>(rad_tensor_row_pitch(y));
    const int64_t mlo = span_lo(r, total, W), mw = span_lo(r + 1, total, W) - mlo;
    gpuMemcpy2DAsync(runs + n * mlo, static_cast<size_t>(mw) * 4, x->data, xp, static_cast<size_t>(mw) * 4, static_cast<size_t>(n),
                     gpuMemcpyDeviceToDevice, s);
    ncclGroupStart();
    for (int64_t k = 0; k < W; ++k) {
        const int64_t lo = span_lo(k, total, W), w = span_lo(k + 1, total, W) - lo;
        ncclBroadcast(runs + n * lo, runs + n * lo, static_cast<size_t>(n * w), ncclFloat32, static_cast<int>(k), g->nccl, s);
    }
    if (rc = nccl_wait(*g, ncclGroupEnd(), "the NCCL broadcasts"); rc != RAD_OK) return rc;
    for (int64_t k = 0; k < W; ++k) {
        const int64_t lo = span_lo(k, total, W), w = span_lo(k + 1, total, W) - lo;
        gpuMemcpy2DAsync(static_cast<char*>(y->data) + lo * 4, yp, runs + n * lo, static_cast<size_t>(w) * 4, static_cast<size_t>(w) * 4,
                         static_cast<size_t>(n), gpuMemcpyDeviceToDevice, s);
    }
    return launched();
}
#endif

// ---- the host's side of a wait ----------------------------------------------------------------

bool collectives_live() { return g_group.comm != nullptr && !g_group.broken; }

// Called while the host waits for the queue: when the current generation was torn down, the
// peer-memory kernels are told to stop waiting and NCCL is aborted. Returns true when it did.
bool collectives_abort_if_torn_down() {
    Group& g = g_group;
    RadComm* c = g.comm;
    if (!c || g.broken || c->staging != g.staging || !c->aborted || !c->aborted(c)) return false;
    g.broken = true;
    if (g.abort_host) *reinterpret_cast<volatile int*>(g.abort_host) = 1;
#if RAD_GPU_NCCL
    if (g.nccl) {
        ncclCommAbort(g.nccl);
        g.nccl = nullptr;
    }
#endif
    g_why = "a peer left the rank group during a collective; the step was abandoned";
    return true;
}

const char* collectives_error() { return g_why.c_str(); }

}  // namespace gpu
