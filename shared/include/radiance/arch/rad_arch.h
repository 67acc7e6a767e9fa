/* arch/rad_arch.h: the architecture-plugin contract (RadBuilder, declare/step, RAD_ARCH_PLUGIN).
 * The declarations live in detail/arch_core.h; including any public ABI header brings every ABI
 * struct and the layout fingerprint (rad_abi_layout.h), so RAD_PLUGIN_ABI_LAYOUT_EXPORT always
 * hashes the complete ABI. */
#ifndef RADIANCE_RAD_ARCH_H
#define RADIANCE_RAD_ARCH_H
#include "../rad_abi_layout.h"
#endif
