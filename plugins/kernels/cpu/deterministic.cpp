// deterministic.cpp: the mode deterministic.h describes. Relaxed atomics: the engine sets it
// before planning, and a launch reads it once.
#include "deterministic.h"

#include <atomic>

namespace cpu {
namespace {
std::atomic<bool> g_deterministic{false};
}

bool deterministic() { return g_deterministic.load(std::memory_order_relaxed); }
void set_deterministic(bool on) { g_deterministic.store(on, std::memory_order_relaxed); }

}  // namespace cpu
