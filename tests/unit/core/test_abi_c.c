/* Compiles the ABI headers as C: every public header must build in a C plugin. */
#include <radiance/arch/rad_arch.h>
#include <radiance/rad_quant.h>

uint64_t rad_test_c_fingerprint(void) { return RAD_ABI_LAYOUT_FINGERPRINT; }
