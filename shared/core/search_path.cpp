#include "radiance/core/search_path.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "radiance/util/strings.h"

#include <unistd.h>

namespace radiance::core {

const char* plugin_dir_name(PluginDir d) {
    switch (d) {
    case PluginDir::Kernels: return "kernels";
    case PluginDir::Architectures: return "architectures";
    case PluginDir::Quantizers: return "quantizers";
    }
    return "?";
}

std::vector<std::string> resolve_homes(const std::string& explicit_homes) {
    std::string spec = explicit_homes;
    if (spec.empty()) {
        const char* env = std::getenv("RADIANCE_HOME");
        if (env && *env) spec = env;
    }
    if (spec.empty()) {
        // The home beside the running executable: build/bin -> build/share/radiance in the build
        // tree, <prefix>/bin -> <prefix>/share/radiance once installed.
        char buf[4096];
        ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
        if (n > 0) {
            buf[n] = 0;
            spec = (std::filesystem::path(buf).parent_path().parent_path() / "share" / "radiance").string();
        }
    }
    return str::split(spec, ":");
}

std::vector<PluginFile> scan_plugins(const std::vector<std::string>& homes) {
    namespace fs = std::filesystem;
    std::vector<PluginFile> out;
    for (PluginDir d : {PluginDir::Kernels, PluginDir::Architectures, PluginDir::Quantizers}) {
        std::map<std::string, std::string> first_seen;  // filename -> path that wins
        for (const auto& home : homes) {
            fs::path dir = fs::path(home) / plugin_dir_name(d);
            std::error_code ec;
            if (!fs::is_directory(dir, ec)) continue;
            std::vector<fs::path> files;
            for (auto& e : fs::directory_iterator(dir, ec))
                if (e.path().extension() == ".so" && (e.is_regular_file(ec) || e.is_symlink(ec))) files.push_back(e.path());
            std::sort(files.begin(), files.end());  // deterministic order within a home
            for (auto& f : files) {
                PluginFile pf{f.string(), f.filename().string(), home, d, ""};
                auto it = first_seen.find(pf.filename);
                if (it != first_seen.end())
                    pf.shadowed_by = it->second;
                else
                    first_seen[pf.filename] = pf.path;
                out.push_back(std::move(pf));
            }
        }
    }
    return out;
}

}  // namespace radiance::core
