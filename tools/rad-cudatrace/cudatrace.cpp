// librad_cudatrace.so: a kernel timeline for machines without Nsight Systems (the H200 machines
// have ncu but no nsys). The CUDA driver loads it through CUDA_INJECTION64_PATH; it turns on
// CUPTI's concurrent-kernel and memcpy activity records (kernels replayed from graphs included,
// each with its graph id and node id) and writes them as CSV to $RAD_CUDATRACE_OUT at exit:
//   kind,name,start_ns,end_ns,stream,graph_id,graph_node,correlation,grid,block,smem
// bench/gpu/trace_summary.py turns the file into per-step and per-kernel tables. Concurrent-kernel
// records do not serialise kernels, so overlap between a kernel and its programmatic dependent
// stays visible (start of one before the end of the other). Timing every node of a replayed graph
// slows the graph's launch, which lands in the gap between steps; RAD_CUDATRACE_GRAPHS=1 records
// each graph launch as a whole instead (kind G: its first node's start to its last node's end),
// which leaves the launch as fast as untraced and so measures the host's gap between steps.
#include <cupti.h>

#include <cxxabi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

struct Record {
    char kind;      // 'K' kernel, 'M' memcpy, 'G' a whole graph launch
    uint32_t name;  // index into names (kernels), copy kind (memcpy)
    uint64_t start, end;
    uint32_t stream, graph_id, correlation;
    uint64_t graph_node;
    int32_t grid, block, smem;
};

std::mutex mu;
std::vector<Record> records;
std::vector<std::string> names;
std::unordered_map<std::string, uint32_t> name_index;

// The function's name without its parameter list: templates keep their arguments, which tell
// the gemv's instances apart.
std::string readable(const char* mangled) {
    int status = 0;
    char* d = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
    std::string s = status == 0 && d ? d : mangled;
    std::free(d);
    for (size_t at; (at = s.find("(anonymous namespace)::")) != std::string::npos;) s.erase(at, 23);
    int depth = 0;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '<')
            ++depth;
        else if (s[i] == '>')
            --depth;
        else if (s[i] == '(' && depth == 0) {
            s.resize(i);
            break;
        }
    }
    for (char& c : s)
        if (c == ',') c = ';';  // the CSV's separator
    return s;
}

uint32_t intern(const char* mangled) {
    std::string key = mangled ? mangled : "?";
    auto it = name_index.find(key);
    if (it != name_index.end()) return it->second;
    names.push_back(readable(key.c_str()));
    return name_index[key] = static_cast<uint32_t>(names.size() - 1);
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    *size = 16u << 20;
    *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
    *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    std::lock_guard<std::mutex> lock(mu);
    CUpti_Activity* r = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
        if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
            const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(r);
            records.push_back({'K', intern(k->name), k->start, k->end, k->streamId, k->graphId, k->correlationId, k->graphNodeId,
                               k->gridX * k->gridY * k->gridZ, k->blockX * k->blockY * k->blockZ,
                               k->dynamicSharedMemory + k->staticSharedMemory});
        } else if (r->kind == CUPTI_ACTIVITY_KIND_GRAPH_TRACE) {
            const auto* g = reinterpret_cast<const CUpti_ActivityGraphTrace2*>(r);
            records.push_back({'G', 0, g->start, g->end, g->streamId, g->graphId, g->correlationId, 0, 0, 0, 0});
        } else if (r->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(r);
            records.push_back({'M', m->copyKind, m->start, m->end, m->streamId, m->graphId, m->correlationId, m->graphNodeId,
                               static_cast<int32_t>(m->bytes), 0, 0});
        }
    }
    std::free(buffer);
}

std::string copy_name(uint32_t kind) {
    switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy host to device";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy device to host";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy device to device";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy peer to peer";
    default: return "memcpy kind " + std::to_string(kind);
    }
}

void write_out() {
    cuptiActivityFlushAll(1);
    const char* path = std::getenv("RAD_CUDATRACE_OUT");
    std::FILE* f = std::fopen(path && *path ? path : "cudatrace.csv", "w");
    if (!f) return;
    std::lock_guard<std::mutex> lock(mu);
    std::fprintf(f, "kind,name,start_ns,end_ns,stream,graph_id,graph_node,correlation,grid,block,smem\n");
    for (const Record& r : records) {
        const std::string name = r.kind == 'K' ? names[r.name] : r.kind == 'G' ? std::string("(whole graph)") : copy_name(r.name);
        std::fprintf(f, "%c,%s,%llu,%llu,%u,%u,%llu,%u,%d,%d,%d\n", r.kind, name.c_str(), static_cast<unsigned long long>(r.start),
                     static_cast<unsigned long long>(r.end), r.stream, r.graph_id, static_cast<unsigned long long>(r.graph_node),
                     r.correlation, r.grid, r.block, r.smem);
    }
    std::fclose(f);
    std::fprintf(stderr, "[cudatrace] %zu records -> %s\n", records.size(), path && *path ? path : "cudatrace.csv");
}

}  // namespace

// The driver calls this once when CUDA_INJECTION64_PATH names this library.
extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) return 0;
    const char* graphs = std::getenv("RAD_CUDATRACE_GRAPHS");
    if (graphs && *graphs == '1') {
        if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_GRAPH_TRACE) != CUPTI_SUCCESS)
            std::fprintf(stderr, "[cudatrace] CUPTI refused whole-graph records\n");
    } else {
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    }
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    std::atexit(write_out);
    return 1;
}
