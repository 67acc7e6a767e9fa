// search_path.h: where plugins are found.
//
// RADIANCE_HOME is a ':'-separated list of homes, the first winning; each home may hold
// kernels/, architectures/ and quantizers/. A file in an earlier home shadows a same-named file
// in a later one, so a user's plugins go ahead of an installation without copying it.
#pragma once
#include <string>
#include <vector>

namespace radiance::core {

enum class PluginDir { Kernels, Architectures, Quantizers };
const char* plugin_dir_name(PluginDir d);

struct PluginFile {
    std::string path;      // absolute or as given
    std::string filename;  // e.g. libref.so
    std::string home;
    PluginDir dir;
    std::string shadowed_by;  // non-empty: a same-named file in an earlier home wins
};

// The homes to search: `explicit_homes` if non-empty (a --radiance-home value), else
// $RADIANCE_HOME, else the home beside the executable (<exe dir>/../share/radiance).
std::vector<std::string> resolve_homes(const std::string& explicit_homes);

// Every *.so under each home's kind directories, in search order, shadowed ones marked.
std::vector<PluginFile> scan_plugins(const std::vector<std::string>& homes);

}  // namespace radiance::core
