// radiance: `radiance serve [OPTIONS]` (serve.h), `radiance --version`, `radiance --help`.
#include <cstdio>
#include <iostream>
#include <string>

#include "radiance/core/search_path.h"
#include "radiance/rad_abi.h"
#include "radiance/rad_abi_layout.h"
#include "radiance/util/child_process.h"
#include "radiance/util/strings.h"
#include "serve.h"

using namespace radiance;
using namespace radiance::frontend;

namespace {

// radiance --version: the release, the plugin ABI this build speaks, and the kernel libraries its
// RADIANCE_HOME holds with what each said about this machine (asked of radiance-worker, which
// opens them: the front end never does).
int print_version() {
    std::printf("radiance %s\n", RADIANCE_VERSION);
    std::printf("plugin ABI %u (layout fingerprint %016llx)\n", static_cast<unsigned>(RAD_ABI_VERSION),
                static_cast<unsigned long long>(RAD_ABI_LAYOUT_FINGERPRINT));
    std::fflush(stdout);
    try {
        std::printf("RADIANCE_HOME: %s\n", str::join(core::resolve_homes(""), ":").c_str());
        const util::ChildResult r = util::run_child({util::self_dir() + "/radiance-worker", "--list-kernels"});
        std::fputs(r.output.c_str(), stdout);
        if (r.exit_code != 0) std::printf("kernel libraries: radiance-worker --list-kernels exited %d\n", r.exit_code);
    } catch (const std::exception& e) {
        std::printf("kernel libraries: cannot list them: %s\n", e.what());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && (std::string(argv[1]) == "--version" || std::string(argv[1]) == "version")) return print_version();
    if (argc >= 2 && (std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h")) {
        std::cout << kUsage;
        return 0;
    }
    if (argc < 2 || std::string(argv[1]) != "serve") {
        std::cerr << kUsage;
        return 2;
    }
    try {
        return serve(parse_serve_options(argc, argv));
    } catch (const std::exception& e) {
        std::cerr << "radiance: " << e.what() << "\n";
        return 1;
    }
}
