/* rad_abi.h: plugin identity, RAD_ABI_VERSION and the ABI law (kinds, RadPluginInfo).
 * The declarations live in detail/abi_core.h; including any public ABI header brings every ABI
 * struct and the layout fingerprint (rad_abi_layout.h), so RAD_PLUGIN_ABI_LAYOUT_EXPORT always
 * hashes the complete ABI. */
#ifndef RADIANCE_RAD_ABI_H
#define RADIANCE_RAD_ABI_H
#include "rad_abi_layout.h"
#endif
