// rad-cpubench [--cpu libcpu.so] [--ref libref.so] [--min-ms N] [--threads 1,8,...] [--no-ref]
//              [--deterministic] [--shape NAME]
//
// gemm throughput of libcpu (every ISA level this machine runs, 1 thread and the whole pool)
// and of libref, on the gemms of a Qwen2.5-0.5B-like model (hidden 896, ff 4864, vocab 151936,
// 14 query / 2 kv heads of 64: fused qkv N = 1152, fused gate|up N = 9728), bf16 weights:
// decode-shaped (M = 1, 4) and prefill-shaped (M = 128, 512). Weights rotate over copies
// totalling >= 1 GiB (more than the last-level cache of the machines measured) so every call
// streams them from memory, as a decode step through all layers does. Prints one table row per (shape, library, level, threads).
#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kernel_lib.h"

using namespace avxcheck;

namespace {

struct Shape {
    const char* name;
    int64_t M, N, K;
};

const Shape kShapes[] = {
    {"qkv", 1, 1152, 896},       {"o", 1, 896, 896},        {"gate_up", 1, 9728, 896},   {"down", 1, 896, 4864},
    {"lm_head", 1, 151936, 896}, {"gate_up", 4, 9728, 896}, {"down", 4, 896, 4864},      {"qkv", 128, 1152, 896},
    {"gate_up", 128, 9728, 896}, {"down", 128, 896, 4864},  {"gate_up", 512, 9728, 896}, {"down", 512, 896, 4864},
};
const char* const kLevels[] = {"scalar", "avx2", "avx512", "avx512bf16"};

std::string default_plugin(const char* file) {
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return file;
    buf[n] = 0;
    return (std::filesystem::path(buf).parent_path() / ".." / "share" / "radiance" / "kernels" / file).string();
}

struct Bench {
    std::vector<float> x, y;
    std::vector<std::vector<uint16_t>> w;  // bf16 weight copies, used in turn
};

Bench make(const Shape& s) {
    Bench b;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    b.x.resize(static_cast<size_t>(s.M * s.K));
    for (auto& v : b.x) v = u(rng);
    b.y.resize(static_cast<size_t>(s.M * s.N));
    const int64_t bytes = s.N * s.K * 2;
    const int64_t copies = std::max<int64_t>(1, ((int64_t{1} << 30) + bytes - 1) / bytes);
    b.w.resize(static_cast<size_t>(copies));
    b.w[0].resize(static_cast<size_t>(s.N * s.K));
    for (auto& v : b.w[0]) v = rad_f32_to_bf16(u(rng) * 0.05f);
    for (size_t c = 1; c < b.w.size(); ++c) b.w[c] = b.w[0];  // other addresses, same values
    return b;
}

// Seconds per call of `row` on `s`, over at least `min_ms` after one warm-up call.
double time_row(const KernelLib& lib, const RadKernelInfo* row, const Shape& s, Bench& b, double min_ms) {
    RadTensor t[4];
    std::memset(t, 0, sizeof t);
    t[0] = {b.x.data(), RAD_F32, 2, {s.M, s.K}, 0};
    t[3] = {b.y.data(), RAD_F32, 2, {s.M, s.N}, 0};
    RadParam p[4];
    std::memset(p, 0, sizeof p);
    const char* names[] = {"M", "N", "K"};
    const int64_t vals[] = {s.M, s.N, s.K};
    for (int i = 0; i < 3; ++i) {
        p[i].name = names[i];
        p[i].type = RAD_P_INT;
        p[i].i = vals[i];
    }
    p[3].name = "wdtype";
    p[3].type = RAD_P_STR;
    p[3].s = "bf16";
    RadArgs a;
    std::memset(&a, 0, sizeof a);
    a.schema = lib.schema("gemm");
    a.t = t;
    a.n_t = 4;
    a.p = p;
    a.n_p = 4;
    size_t next = 0;
    auto call = [&] {
        t[1] = {b.w[next].data(), RAD_BF16, 2, {s.N, s.K}, 0};
        next = (next + 1) % b.w.size();
        if (row->launch(&a) != RAD_OK) std::fprintf(stderr, "launch failed\n");
    };
    call();
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    int calls = 0;
    double ms = 0;
    do {
        call();
        ++calls;
        ms = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    } while (ms < min_ms);
    return ms / 1000.0 / calls;
}

const RadKernelInfo* row_for(const KernelLib& lib, const Shape& s) {
    Params p{{"M", {RAD_P_INT, s.M, 0, ""}},
             {"N", {RAD_P_INT, s.N, 0, ""}},
             {"K", {RAD_P_INT, s.K, 0, ""}},
             {"wdtype", {RAD_P_STR, 0, 0, "bf16"}}};
    const RadKernelInfo* best = nullptr;
    for (auto* r : lib.rows("gemm")) {
        Params derived;
        if (lib.accepts(r, p, &derived) && (!best || r->priority > best->priority)) best = r;
    }
    return best;
}

void print_row(const Shape& s, const char* lib, const char* level, int threads, double sec) {
    const double flops = 2.0 * s.M * s.N * s.K, wbytes = 2.0 * s.N * s.K;
    std::printf("%-8s %4lld %6lld %5lld  %-6s %-10s %3d %10.3f %9.1f %8.1f\n", s.name, static_cast<long long>(s.M),
                static_cast<long long>(s.N), static_cast<long long>(s.K), lib, level, threads, sec * 1e3, flops / sec / 1e9,
                wbytes / sec / 1e9);
    std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
    std::string cpu_path = default_plugin("libcpu.so"), ref_path = default_plugin("libref.so");
    double min_ms = 300;
    bool with_ref = true, deterministic = false;  // --deterministic: libcpu's batch-invariant mode
    std::string only;                               // --shape: that shape's rows only
    std::vector<int> thread_counts;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--cpu" && i + 1 < argc)
            cpu_path = argv[++i];
        else if (a == "--ref" && i + 1 < argc)
            ref_path = argv[++i];
        else if (a == "--min-ms" && i + 1 < argc)
            min_ms = std::stod(argv[++i]);
        else if (a == "--no-ref")
            with_ref = false;
        else if (a == "--deterministic")
            deterministic = true;
        else if (a == "--shape" && i + 1 < argc)
            only = argv[++i];
        else if (a == "--threads" && i + 1 < argc) {
            for (std::string t = argv[++i]; !t.empty();) {
                const size_t c = t.find(',');
                thread_counts.push_back(std::stoi(t.substr(0, c)));
                t = c == std::string::npos ? "" : t.substr(c + 1);
            }
        } else {
            std::fprintf(stderr,
                         "usage: rad-cpubench [--cpu libcpu.so] [--ref libref.so] [--min-ms N] [--threads 1,8,...] "
                         "[--no-ref] [--deterministic] [--shape NAME]\n");
            return 2;
        }
    }
    try {
        KernelLib cpu(cpu_path);
        std::unique_ptr<KernelLib> ref;
        if (with_ref) ref = std::make_unique<KernelLib>(ref_path);
        if (!cpu.isa_force || !cpu.par_force) throw std::runtime_error(cpu_path + " lacks avx_isa_force / avx_par_force");
        if (deterministic && (!cpu.set_deterministic || cpu.set_deterministic(1) != RAD_OK))
            throw std::runtime_error(cpu_path + " has no deterministic mode");
        const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        if (thread_counts.empty()) thread_counts = hw > 1 ? std::vector<int>{1, hw} : std::vector<int>{1};
        std::printf("libcpu %s; %d hardware threads; bf16 weights, >= 1 GiB of weight copies in rotation\n",
                    cpu.isa_describe ? cpu.isa_describe() : "?", hw);
        std::printf("%-8s %4s %6s %5s  %-6s %-10s %3s %10s %9s %8s\n", "shape", "M", "N", "K", "lib", "isa", "thr", "ms/call", "GFLOP/s",
                    "GB/s(w)");
        for (const Shape& s : kShapes) {
            if (!only.empty() && only != s.name) continue;
            Bench b = make(s);
            const RadKernelInfo* row = row_for(cpu, s);
            for (int level = 0; level < 4; ++level) {
                if (cpu.isa_force(level) != level) continue;
                if (level == 0 && s.M > 4) continue;  // the portable path is for correctness, not prefill
                for (int threads : thread_counts) {
                    cpu.par_force(threads);
                    print_row(s, "libcpu", kLevels[level], threads, time_row(cpu, row, s, b, min_ms));
                }
            }
            cpu.isa_force(-1);
            cpu.par_force(0);
            // libref is single-threaded and slow: one decode and one prefill size of each shape.
            if (ref && (s.M == 1 || s.M == 128) && std::strcmp(s.name, "lm_head") != 0)
                print_row(s, "libref", "ref", 1, time_row(*ref, row_for(*ref, s), s, b, min_ms));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "rad-cpubench: %s\n", e.what());
        return 2;
    }
    return 0;
}
