// An architecture plugin for the loader tests: declares nothing, steps nothing.
#include <radiance/arch/rad_arch.h>

namespace test_arch {
int declare(RadBuilder*, const RadModelMeta*, const RadBuildCtx*) { return RAD_OK; }
void step(RadCtx*, const RadBatch*) {}
}  // namespace test_arch

RAD_ARCH_PLUGIN(test_arch, TA_NAME, TA_ID, TA_QUANT, "0.1", "loader test architecture")
