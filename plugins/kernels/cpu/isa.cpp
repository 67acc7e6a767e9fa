// isa.cpp: which instruction sets this machine runs (CPUID, and XGETBV for the OS saving the
// wide registers), the kernel table in effect, and avx_isa_force.
#include <radiance/rad_plugin.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "cpu_kernels.h"
#include "gemm_amx.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define CPU_X86 1
#endif

namespace cpu {
namespace {

struct Features {
    bool avx2 = false, fma = false, f16c = false, os_avx = false;
    bool avx512f = false, avx512bw = false, avx512vl = false, avx512_bf16 = false, avx512_vnni = false;
    bool os_avx512 = false;
};

Features detect() {
    Features f;
#ifdef CPU_X86
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    f.fma = c & (1u << 12);
    f.f16c = c & (1u << 29);
    const bool osxsave = c & (1u << 27), avx = c & (1u << 28);
    if (osxsave && avx) {
        unsigned lo, hi;
        __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        f.os_avx = (lo & 0x6u) == 0x6u;                   // XMM and YMM state
        f.os_avx512 = f.os_avx && (lo & 0xe0u) == 0xe0u;  // opmask, ZMM0-15 upper, ZMM16-31
    }
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f.avx2 = b & (1u << 5);
        f.avx512f = b & (1u << 16);
        f.avx512bw = b & (1u << 30);
        f.avx512vl = b & (1u << 31);
        f.avx512_vnni = c & (1u << 11);
        const unsigned max_sub = a;
        if (max_sub >= 1 && __get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avx512_bf16 = a & (1u << 5);
    }
#endif
    return f;
}

Features g_feat;
bool g_supported[kIsaCount] = {true, false, false, false};
std::string g_describe;
std::once_flag g_once;
std::atomic<int> g_level{kIsaScalar};

const KernelTable* const kTables[kIsaCount] = {&kTableScalar, &kTableAvx2, &kTableAvx512, &kTableAvx512Bf16};
const char* const kLevelNames[kIsaCount] = {"scalar", "avx2", "avx512", "avx512bf16"};

// The best level this machine runs, short of the opt-in level 3.
int best_level() {
    int best = kIsaScalar;
    for (int l = 0; l <= kIsaAvx512; ++l)
        if (g_supported[l]) best = l;
    return best;
}

}  // namespace

void isa_init() {
    std::call_once(g_once, [] {
        g_feat = detect();
        const Features& f = g_feat;
        g_supported[kIsaAvx2] = f.os_avx && f.avx2 && f.fma && f.f16c;
        g_supported[kIsaAvx512] = g_supported[kIsaAvx2] && f.os_avx512 && f.avx512f && f.avx512bw && f.avx512vl;
        g_supported[kIsaAvx512Bf16] = g_supported[kIsaAvx512] && f.avx512_bf16;
        const std::pair<bool, const char*> names[] = {{f.avx2, "avx2"},
                                                      {f.fma, "fma"},
                                                      {f.f16c, "f16c"},
                                                      {f.avx512f, "avx512f"},
                                                      {f.avx512bw, "avx512bw"},
                                                      {f.avx512vl, "avx512vl"},
                                                      {f.avx512_bf16, "avx512_bf16"},
                                                      {f.avx512_vnni, "avx512_vnni"}};
        for (auto& [on, n] : names) {
            if (!on) continue;
            if (!g_describe.empty()) g_describe.push_back(' ');
            g_describe.append(n);
        }
        if (amx_available()) g_describe.append(g_describe.empty() ? "amx_bf16" : " amx_bf16");  // prefill gemm tiles
        if (g_describe.empty()) g_describe = "none";
        int level = best_level();
        // RADIANCE_CPU_ISA (scalar, avx2, avx512, avx512bf16) picks a level this machine runs:
        // paths compared through the whole engine, and the way to opt in to level 3.
        if (const char* e = std::getenv("RADIANCE_CPU_ISA"))
            for (int l = 0; l < kIsaCount; ++l)
                if (!std::strcmp(e, kLevelNames[l]) && g_supported[l]) level = l;
        g_level.store(level);
    });
}

bool isa_supported(int level) { return level >= 0 && level < kIsaCount && g_supported[level]; }
int isa_level() { return g_level.load(std::memory_order_relaxed); }
const KernelTable& kernels() { return *kTables[g_level.load(std::memory_order_relaxed)]; }
const char* isa_features() { return g_describe.c_str(); }

}  // namespace cpu

extern "C" {
// Selects the kernels of one level (0 scalar, 1 avx2, 2 avx512, 3 avx512 with AVX512_BF16 dot
// products; -1 the best this machine runs short of the opt-in level 3). Returns the level now
// in effect, or -1 (and changes nothing) when the machine cannot run the level asked for.
RAD_EXPORT int avx_isa_force(int level) {
    cpu::isa_init();
    if (level < 0) level = cpu::best_level();
    if (!cpu::isa_supported(level)) return -1;
    cpu::g_level.store(level);
    return level;
}
// The level in effect and the CPU's features, for a human ("avx2: avx2 fma f16c").
RAD_EXPORT const char* avx_isa_describe(void) {
    cpu::isa_init();
    static thread_local std::string s;
    s = std::string(cpu::kLevelNames[cpu::isa_level()]) + ": " + cpu::isa_features();
    return s.c_str();
}
}
