/* rad_quant.h: the quantiser contract for rad-convert.
 * The declarations live in detail/quant_core.h; including any public ABI header brings every ABI
 * struct and the layout fingerprint (rad_abi_layout.h), so RAD_PLUGIN_ABI_LAYOUT_EXPORT always
 * hashes the complete ABI. */
#ifndef RADIANCE_RAD_QUANT_H
#define RADIANCE_RAD_QUANT_H
#include "rad_abi_layout.h"
#endif
