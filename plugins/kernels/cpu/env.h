// env.h: libcpu's numeric settings from the environment (RADIANCE_THREADS, RADIANCE_CPU_SPIN_US,
// RADIANCE_CPU_NUMA; docs/SETTINGS.md): a whole decimal number within [lo, hi], or `fallback` when
// the variable is unset, empty, not a number or out of range.
#pragma once
#include <cstdlib>

namespace cpu {

inline long env_long(const char* name, long lo, long hi, long fallback) {
    const char* e = std::getenv(name);
    if (!e || !*e) return fallback;
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    return *end == '\0' && v >= lo && v <= hi ? v : fallback;
}

}  // namespace cpu
