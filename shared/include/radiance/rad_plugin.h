/* rad_plugin.h: the kernel-library contract (schemas, rows, constraints, RadArgs, helpers).
 * The declarations live in detail/plugin_core.h; including any public ABI header brings every ABI
 * struct and the layout fingerprint (rad_abi_layout.h), so RAD_PLUGIN_ABI_LAYOUT_EXPORT always
 * hashes the complete ABI. */
#ifndef RADIANCE_RAD_PLUGIN_H
#define RADIANCE_RAD_PLUGIN_H
#include "rad_abi_layout.h"
#endif
