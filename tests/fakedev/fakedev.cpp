// libfakedev: a pretend card for testing the engine's device placement on machines without one.
//
// Its "device memory" is host memory and its rows are libref's functions declared as device
// rows, so a plan placed on it must compute what libref computes on the host. What it checks is
// the engine's side: placement and device-only selection, the weights' upload, the arena, KV and
// scratch on the card, the staged step inputs (a raw operand pointing anywhere else would read
// the host array the arch saw, not the copy: this library's copies are real), greedy argmax on
// the card, and decode graphs: between graph_begin and graph_end every launch and copy is
// recorded (a launch's arguments deep-copied) instead of run, and graph_launch replays the records.
#include <radiance/kernels/rad_compose.h>
#include <radiance/rad_ops.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "ref_util.h"

namespace {

int ref_add_rms_norm(const RadArgs* a) { return rad_compose_add_rms_norm(a, ref_add, ref_rms_norm); }
int ref_gemm_swiglu(const RadArgs* a) { return rad_compose_gemm_swiglu(a, ref_gemm, ref_swiglu); }

struct Record {
    RadLaunchFn fn;  // null: a recorded copy of n bytes from src to dst
    void* dst = nullptr;
    const void* src = nullptr;
    uint64_t n = 0;
    std::vector<RadTensor> t;
    std::vector<RadParam> p;
    std::vector<std::unique_ptr<std::string>> strs;
    RadArgs a{};
};
struct Graph {
    std::vector<std::unique_ptr<Record>> launches;
};
Graph* g_capturing = nullptr;
int g_stream_token = 0;
std::string g_error = "no error";

int run_or_record(RadLaunchFn fn, const RadArgs* a) {
    if (!g_capturing) return fn(a);
    auto r = std::make_unique<Record>();
    r->fn = fn;
    r->t.assign(a->t, a->t + a->n_t);
    for (int i = 0; i < a->n_p; ++i) {
        RadParam q = a->p[i];
        r->strs.push_back(std::make_unique<std::string>(q.name));
        q.name = r->strs.back()->c_str();
        if (q.s) {
            r->strs.push_back(std::make_unique<std::string>(q.s));
            q.s = r->strs.back()->c_str();
        }
        r->p.push_back(q);
    }
    r->a = *a;
    r->a.t = r->t.data();
    r->a.p = r->p.data();
    g_capturing->launches.push_back(std::move(r));
    return RAD_OK;
}

template <RadLaunchFn F>
int dev_row(const RadArgs* a) {
    return run_or_record(F, a);
}

const RadConstraint c_float_weights[] = {RAD_CIN("wdtype", "f32 bf16 f16")};
const RadConstraint c_block16[] = {RAD_CEQ("block", 16)};

#define ROW(name, op, fn, cons, ncons) \
    {name, op, op, "libref's " op " as a device row", "any", "f32 activations", RAD_DOMAIN_DEVICE, 0, cons, ncons, 0, dev_row<fn>}

const RadKernelInfo rows[] = {
    ROW("fake_embed", "embed", ref_embed, c_float_weights, 1),
    ROW("fake_rms_norm", "rms_norm", ref_rms_norm, c_float_weights, 1),
    ROW("fake_layer_norm", "layer_norm", ref_layer_norm, c_float_weights, 1),
    ROW("fake_gemm", "gemm", ref_gemm, c_float_weights, 1),
    ROW("fake_rope", "rope", ref_rope, nullptr, 0),
    ROW("fake_attention", "attention", ref_attention, c_block16, 1),
    ROW("fake_swiglu", "swiglu", ref_swiglu, nullptr, 0),
    ROW("fake_geglu", "geglu", ref_geglu, nullptr, 0),
    ROW("fake_gelu", "gelu", ref_gelu, nullptr, 0),
    ROW("fake_add", "add", ref_add, nullptr, 0),
    ROW("fake_gather_rows", "gather_rows", ref_gather_rows, nullptr, 0),
    ROW("fake_argmax", "argmax", ref_argmax, nullptr, 0),
    ROW("fake_sample", "sample", ref_sample, nullptr, 0),
    ROW("fake_all_reduce_host", "all_reduce", ref_all_reduce, nullptr, 0),
    ROW("fake_all_gather_host", "all_gather", ref_all_gather, nullptr, 0),
    {"fake_add_rms_norm", "add_rms_norm", "add_rms_norm", "libref's add then rms_norm as a device row", "any", "f32 activations",
     RAD_DOMAIN_DEVICE, 0, c_float_weights, 1, 0, dev_row<ref_add_rms_norm>, nullptr, nullptr, nullptr, nullptr, nullptr,
     "add,rms_norm"},
    {"fake_gemm_swiglu", "gemm_swiglu", "gemm_swiglu", "libref's gemm then swiglu as a device row", "any", "f32 activations",
     RAD_DOMAIN_DEVICE, 0, c_float_weights, 1, 0, dev_row<ref_gemm_swiglu>, nullptr, nullptr, rad_compose_gemm_swiglu_scratch, nullptr,
     nullptr, "gemm,swiglu"},
};

// ---- the pretend card ----
int mem_free(uint64_t* f) {
    *f = 1ull << 30;
    return RAD_OK;
}
void* alloc(uint64_t n) { return std::aligned_alloc(256, (n + 255) / 256 * 256); }
void release(void* p) { std::free(p); }
RadStream stream_create() { return reinterpret_cast<RadStream>(&g_stream_token); }
void stream_destroy(RadStream) {}
int copy(void* d, const void* s, uint64_t n, int, RadStream) {
    if (g_capturing) {  // recorded: a graph copies what the source holds when it replays
        auto r = std::make_unique<Record>();
        r->fn = nullptr;
        r->dst = d;
        r->src = s;
        r->n = n;
        g_capturing->launches.push_back(std::move(r));
        return RAD_OK;
    }
    std::memcpy(d, s, n);
    return RAD_OK;
}
int fill(void* d, int b, uint64_t n, RadStream) {
    std::memset(d, b, n);
    return RAD_OK;
}
int sync(RadStream) { return g_capturing ? (g_error = "a sync inside a graph capture", RAD_E_INTERNAL) : RAD_OK; }
int graph_begin(RadStream) {
    if (g_capturing) return g_error = "nested graph capture", RAD_E_INTERNAL;
    g_capturing = new Graph;
    return RAD_OK;
}
int graph_end(RadStream, void** out) {
    *out = g_capturing;
    g_capturing = nullptr;
    return *out ? RAD_OK : RAD_E_INTERNAL;
}
int graph_launch(void* g, RadStream) {
    auto& launches = static_cast<Graph*>(g)->launches;
#ifdef FAKEDEV_FAULT_SKIP_LAST_LAUNCH
    // The broken card of the tests' own test (tests/fakedev/CMakeLists.txt, libfakedev_faulty): its
    // replayed graphs skip their last launch, so a decode step returns the logits or tokens a step
    // before it left behind, while prefill (never replayed) stays right.
    const Record* skipped = nullptr;
    for (auto& r : launches)
        if (r->fn) skipped = r.get();
#endif
    for (auto& r : launches) {
#ifdef FAKEDEV_FAULT_SKIP_LAST_LAUNCH
        if (r.get() == skipped) continue;
#endif
        if (!r->fn) {
            std::memcpy(r->dst, r->src, r->n);
            continue;
        }
        if (int rc = r->fn(&r->a); rc != RAD_OK) return g_error = "a replayed launch failed", rc;
    }
    return RAD_OK;
}
void graph_destroy(void* g) { delete static_cast<Graph*>(g); }
const char* last_error() { return g_error.c_str(); }

const RadDeviceApi g_api = {sizeof(RadDeviceApi), 0, "fake", "pretend card (host memory)", 0, 1, 1ull << 30,
                            mem_free, alloc, release, alloc, release, stream_create, stream_destroy, copy, fill, sync,
                            graph_begin, graph_end, graph_launch, graph_destroy, last_error, {}};

}  // namespace

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT

extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_KERNEL, "libfakedev", "0.1", "test card: libref's rows on host memory", "host"};
    return &info;
}
RAD_EXPORT const RadDeviceApi* rad_kernel_device(void) { return &g_api; }
RAD_CONVENTIONAL_KERNEL_EXPORTS(rows)
RAD_EXPORT int rad_kernel_collective(int i) {
    return i >= 0 && i < RAD_N_OF(rows) && (rows[i].launch == dev_row<ref_all_reduce> || rows[i].launch == dev_row<ref_all_gather>);
}
// The pretend card's graphs replay every launch, the host-staging barrier included, so all its rows
// count as queued: tensor-parallel decode steps get recorded (and tested) on it.
RAD_EXPORT int rad_kernel_queued(int i) { return i >= 0 && i < RAD_N_OF(rows); }
}
