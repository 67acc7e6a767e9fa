// log.h: leveled logging to stderr. RADIANCE_LOG=debug|info|warn|error sets the level.
#pragma once
#include <sstream>
#include <string>

namespace radiance::log {

enum class Level { debug = 0, info = 1, warn = 2, error = 3 };

Level level();
void set_level(Level l);
void write(Level l, const std::string& msg);

template <typename... A>
std::string cat(const A&... a) {
    std::ostringstream os;
    (os << ... << a);
    return os.str();
}
template <typename... A>
void debug(const A&... a) {
    if (level() <= Level::debug) write(Level::debug, cat(a...));
}
template <typename... A>
void info(const A&... a) {
    if (level() <= Level::info) write(Level::info, cat(a...));
}
template <typename... A>
void warn(const A&... a) {
    if (level() <= Level::warn) write(Level::warn, cat(a...));
}
template <typename... A>
void error(const A&... a) {
    write(Level::error, cat(a...));
}

}  // namespace radiance::log
