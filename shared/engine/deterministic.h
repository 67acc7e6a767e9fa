// deterministic.h: EngineOptions::deterministic handed to the kernel libraries before the plan is
// made (plugin_core.h, rad_kernel_set_deterministic).
#pragma once
#include "radiance/core/registry.h"

namespace radiance::engine {

// Sets every non-reference library with host rows to `on` (off too, so a later engine in the
// process gets the default back). With `on`, throws naming what cannot honour the flag: a card
// placement (`dev`: libgpu does not fix its reduction orders yet), or a library that lacks the
// export or refuses it.
void apply_deterministic(const core::Registry& reg, bool on, const RadDeviceApi* dev);

}  // namespace radiance::engine
