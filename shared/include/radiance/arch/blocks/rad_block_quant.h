// rad_block_quant.h: what one build of an architecture source serves, from its compile
// definitions (plugins/arch/quant_plugins.cmake builds a family once unquantised and once per
// quant descriptor, "one source, several .so"): FAMILY_ID, the architecture id; ARCH_QUANT, the
// quant descriptor ("" unquantised); ARCH_CODES, the code dtypes its quantised projections may have
// (Linear::declare's `served`: "" refuses every quantised weight by name); PLUGIN_NAME, the
// plugin's name (the id itself when unquantised).
#pragma once

#ifndef FAMILY_ID
#error "build with -DFAMILY_ID=\"<architecture id>\""
#endif
#ifndef ARCH_QUANT
#define ARCH_QUANT ""
#endif
#ifndef ARCH_CODES
#define ARCH_CODES ""
#endif
#ifndef PLUGIN_NAME
#define PLUGIN_NAME FAMILY_ID
#endif
