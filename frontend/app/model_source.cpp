#include "model_source.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <sstream>

#include "radiance/util/child_process.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::frontend {

namespace fs = std::filesystem;

std::string default_model(const std::vector<std::string>& homes) {
    for (auto& h : homes) {
        fs::path p = fs::path(h) / "models" / "demo";
        std::error_code ec;
        if (fs::exists(p / "config.json", ec)) return p.string();
    }
    return "";
}

std::string resolve_model(const std::string& spec, const std::string& homes, const std::string& cache_dir) {
    std::error_code ec;
    if (!fs::exists(spec, ec)) throw Error("--model " + spec + ": no such file or folder");
    if (!fs::is_directory(spec, ec)) return spec;
    // A stable key for this checkpoint: its absolute path and every file's size and time.
    std::ostringstream key;
    key << fs::absolute(spec).lexically_normal().string();
    for (auto& e : fs::directory_iterator(spec, ec))
        if (e.is_regular_file(ec))
            key << "|" << e.path().filename().string() << ":" << e.file_size(ec) << ":" << e.last_write_time(ec).time_since_epoch().count();
    const std::string name = fs::absolute(spec).lexically_normal().filename().string();
    fs::create_directories(cache_dir, ec);
    const fs::path out = fs::path(cache_dir) / (name + "-" + std::to_string(std::hash<std::string>{}(key.str())) + ".rad");
    if (fs::exists(out, ec)) {
        log::info("using the converted container ", out.string());
        return out.string();
    }
    log::info("converting ", spec, " into ", out.string());
    // Written under a temporary name and renamed: a conversion cut short leaves no container that
    // a later start would take for a finished one.
    const std::string part = out.string() + ".part-" + std::to_string(getpid());
    std::vector<std::string> argv = {util::self_dir() + "/rad-convert", spec, "-o", part};
    if (!homes.empty()) argv.insert(argv.end(), {"--radiance-home", homes});
    const util::ChildResult r = util::run_child(argv);
    if (r.exit_code != 0) {
        fs::remove(part, ec);
        std::string why = r.output;
        while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
        throw Error("cannot convert " + spec + " (rad-convert exited " + std::to_string(r.exit_code) +
                    "): " + (why.size() > 2000 ? "..." + why.substr(why.size() - 2000) : why));
    }
    fs::rename(part, out, ec);
    if (ec) throw Error("cannot move the converted container to " + out.string() + ": " + ec.message());
    return out.string();
}

}  // namespace radiance::frontend
