#include "list_kernels.h"

#include <cstdio>

#include "radiance/core/registry.h"
#include "radiance/util/log.h"

namespace radiance::worker {

int list_kernels(const std::string& homes) {
    try {
        log::set_level(log::Level::error);
        const core::Registry reg = core::Registry::load(core::load_options(homes, ""));
        for (const auto& rec : reg.records()) {
            if (rec.kind != "kernels") continue;
            const char* status = rec.status == core::PluginRecord::Status::Loaded     ? "loaded"
                                 : rec.status == core::PluginRecord::Status::Declined ? "declined this machine"
                                                                                      : "not used";
            std::printf("kernel library %s %s: %s%s\n", rec.name.empty() ? "?" : rec.name.c_str(), rec.version.c_str(), status,
                        rec.reference ? " (reference)" : "");
        }
        return 0;
    } catch (const std::exception& e) {
        std::printf("kernel libraries: cannot list them: %s\n", e.what());
        return 1;
    }
}

}  // namespace radiance::worker
