#include <dlfcn.h>

#include "radiance/core/registry.h"

namespace radiance::core {

Plugin::Plugin(std::string p, void* handle) : path(std::move(p)), handle_(handle) {}

Plugin::~Plugin() {
    if (handle_) dlclose(handle_);
}

void* Plugin::symbol(const char* sym) const { return dlsym(handle_, sym); }

}  // namespace radiance::core
