// error.h: the one exception type the engine throws for problems a user can fix.
// Messages name the thing that is wrong (file, section, offset, plugin, tensor); callers at the
// edge (a CLI's main, an HTTP handler) print them and exit or answer 4xx, never crash.
#pragma once
#include <stdexcept>
#include <string>

namespace radiance {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace radiance
