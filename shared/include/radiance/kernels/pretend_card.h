/* pretend_card.h: the one pretend card of the test and benchmark kernel libraries (libfakedev,
 * libnoopcard): "device memory" is host memory, copies are memmove, and decode graphs are real
 * recordings: between graph_begin and graph_end every launch of a row wrapped in
 * pretend_card::row<F> and every copy is recorded (a launch's arguments deep-copied) instead of
 * run, and graph_launch replays the records. A library includes it in one source file, declares
 * its rows with row<F>, and exports api(). Never a serving card. C++ only. */
#pragma once
#include <radiance/rad_plugin.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace radiance::pretend_card {

struct Record {
    RadLaunchFn fn = nullptr;  // null: a recorded copy of n bytes from src to dst
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

// The card's state: one per library (each includes this header in one file of its own).
inline Graph* g_capturing = nullptr;
inline int g_stream_token = 0;
inline std::string g_error = "no error";
// Called by sync() outside a capture (libnoopcard charges a step's time here); may be null.
inline void (*g_on_sync)() = nullptr;
// Test hook of a broken card (libfakedev_faulty): replayed graphs skip their last launch.
inline bool g_skip_last_launch = false;

inline int run_or_record(RadLaunchFn fn, const RadArgs* a) {
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

// A row's launch on the pretend card: run now, or recorded into the graph being captured.
template <RadLaunchFn F>
int row(const RadArgs* a) {
    return run_or_record(F, a);
}

inline int mem_free(uint64_t* f) {
    *f = 1ull << 30;
    return RAD_OK;
}
inline void* alloc(uint64_t n) { return std::aligned_alloc(256, (n + 255) / 256 * 256); }
inline void release(void* p) { std::free(p); }
inline RadStream stream_create() { return reinterpret_cast<RadStream>(&g_stream_token); }
inline void stream_destroy(RadStream) {}
inline int copy(void* d, const void* s, uint64_t n, int, RadStream) {
    if (g_capturing) {  // recorded: a graph copies what the source holds when it replays
        auto r = std::make_unique<Record>();
        r->dst = d;
        r->src = s;
        r->n = n;
        g_capturing->launches.push_back(std::move(r));
        return RAD_OK;
    }
    std::memmove(d, s, n);
    return RAD_OK;
}
inline int fill(void* d, int b, uint64_t n, RadStream) {
    std::memset(d, b, n);
    return RAD_OK;
}
inline int sync(RadStream) {
    if (g_capturing) return g_error = "a sync inside a graph capture", RAD_E_INTERNAL;
    if (g_on_sync) g_on_sync();
    return RAD_OK;
}
inline int graph_begin(RadStream) {
    if (g_capturing) return g_error = "nested graph capture", RAD_E_INTERNAL;
    g_capturing = new Graph;
    return RAD_OK;
}
inline int graph_end(RadStream, void** out) {
    *out = g_capturing;
    g_capturing = nullptr;
    return *out ? RAD_OK : RAD_E_INTERNAL;
}
inline int graph_launch(void* g, RadStream) {
    auto& launches = static_cast<Graph*>(g)->launches;
    const Record* skipped = nullptr;
    if (g_skip_last_launch)
        for (auto& r : launches)
            if (r->fn) skipped = r.get();
    for (auto& r : launches) {
        if (r.get() == skipped) continue;
        if (!r->fn) {
            std::memmove(r->dst, r->src, r->n);
            continue;
        }
        if (int rc = r->fn(&r->a); rc != RAD_OK) return g_error = "a replayed launch failed", rc;
    }
    return RAD_OK;
}
inline void graph_destroy(void* g) { delete static_cast<Graph*>(g); }
inline const char* last_error() { return g_error.c_str(); }

// The card's RadDeviceApi: `runtime` and `name` as rad-info shows them; peer_cards / cards as
// RadDeviceApi documents (0, 0: no peer access known).
inline RadDeviceApi api(const char* runtime, const char* name, int32_t peer_cards = 0, int32_t cards = 0) {
    RadDeviceApi d{};
    d.struct_size = sizeof(RadDeviceApi);
    d.ordinal = 0;
    d.runtime = runtime;
    d.name = name;
    d.cc = 0;
    d.multiprocessors = 1;
    d.memory_bytes = 1ull << 30;
    d.mem_free = mem_free;
    d.alloc = alloc;
    d.release = release;
    d.alloc_host = alloc;
    d.release_host = release;
    d.stream_create = stream_create;
    d.stream_destroy = stream_destroy;
    d.copy = copy;
    d.fill = fill;
    d.sync = sync;
    d.graph_begin = graph_begin;
    d.graph_end = graph_end;
    d.graph_launch = graph_launch;
    d.graph_destroy = graph_destroy;
    d.last_error = last_error;
    d.peer_cards = peer_cards;
    d.cards = cards;
    return d;
}

}  // namespace radiance::pretend_card
