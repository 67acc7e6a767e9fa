// converted_llama.h: the shared llama fixture (SHARED_LLAMA) converted once per test process
// into a temporary .rad, which is removed again when the process exits (catch_discover_tests
// runs every test case as a process of its own, so a kept file per process piled up in /tmp).
#pragma once
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>

#include "radiance/convert/convert.h"

namespace radiance::testing {

inline const std::string& converted_llama() {
    struct Converted {
        std::string path;
        Converted() {
            path = (std::filesystem::temp_directory_path() / ("rad_llama_" + std::to_string(getpid()) + ".rad")).string();
            core::LoadOptions lo;
            lo.homes = {RAD_BUILD_HOME_DIR};
            core::Registry reg = core::Registry::load(lo);
            convert::ConvertOptions o;
            o.src = SHARED_LLAMA;
            o.out = path;
            std::ostringstream log;
            convert::convert(reg, o, log);
        }
        ~Converted() {
            std::error_code ec;
            std::filesystem::remove(path, ec);
        }
    };
    static const Converted c;
    return c.path;
}

}  // namespace radiance::testing
