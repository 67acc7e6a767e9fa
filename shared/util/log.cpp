#include "radiance/util/log.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace radiance::log {
namespace {

Level initial_level() {
    const char* e = std::getenv("RADIANCE_LOG");
    if (!e) return Level::info;
    if (!std::strcmp(e, "debug")) return Level::debug;
    if (!std::strcmp(e, "warn")) return Level::warn;
    if (!std::strcmp(e, "error")) return Level::error;
    return Level::info;
}

Level g_level = initial_level();
std::mutex g_mu;

}  // namespace

Level level() { return g_level; }
void set_level(Level l) { g_level = l; }

void write(Level l, const std::string& msg) {
    static const char* names[] = {"debug", "info", "warn", "error"};
    std::lock_guard<std::mutex> lock(g_mu);
    std::fprintf(stderr, "[%s] %s\n", names[static_cast<int>(l)], msg.c_str());
}

}  // namespace radiance::log
