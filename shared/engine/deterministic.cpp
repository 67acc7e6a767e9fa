// deterministic.cpp: apply_deterministic (deterministic.h).
#include "deterministic.h"

#include <string>

#include "radiance/util/error.h"

namespace radiance::engine {

void apply_deterministic(const core::Registry& reg, bool on, const RadDeviceApi* dev) {
    if (on && dev)
        throw Error(std::string("--deterministic is honoured on the host only (libref, libcpu); this plan runs on ") + dev->name +
                    ", whose library does not fix its reduction orders yet: run it with --placement host, or without --deterministic");
    for (const core::KernelLibrary& lib : reg.kernel_libraries()) {
        if (lib.reference) continue;  // batch-invariant by construction (docs/OPS.md)
        bool host = false;
        for (const core::KernelRow& r : lib.rows) host = host || r.info->domain == RAD_DOMAIN_HOST;
        if (!host) continue;
        const auto set = lib.plugin->fn<RadKernelSetDeterministicFn>("rad_kernel_set_deterministic");
        if (!on) {
            if (set) set(0);
            continue;
        }
        if (!set)
            throw Error("--deterministic: kernel library '" + lib.plugin->name + "' (" + lib.plugin->path +
                        ") has host rows but no rad_kernel_set_deterministic, so its sums may depend on the batch: leave it out "
                        "with --kernels");
        if (const int rc = set(1); rc != RAD_OK)
            throw Error("--deterministic: kernel library '" + lib.plugin->name + "' (" + lib.plugin->path + ") refused it (code " +
                        std::to_string(rc) + ")");
    }
}

}  // namespace radiance::engine
