// A configurable kernel library for the loader and selection tests. One source, several builds:
//   TK_NAME           plugin name
//   TK_ABI_SKEW       report RAD_ABI_VERSION + 1
//   TK_LAYOUT_SKEW    report a layout fingerprint that differs from the headers'
//   TK_DECLINE        rad_plugin_open declines the machine
//   TK_SCHEMA_OTHER   declare t_gemm with a different parameter list
//   TK_REFERENCE      the whole library is a reference library
//   TK_ROWS           which row set: 1 banded rows, 2 one catch-all row
#include <radiance/rad_plugin.h>

#ifndef TK_NAME
#define TK_NAME "testkern"
#endif
#ifndef TK_ROWS
#define TK_ROWS 1
#endif

namespace {

int noop_launch(const RadArgs*) { return RAD_OK; }

const RadParamSpec gemm_params[] = {
    {"M", RAD_P_INT, RAD_REQUIRED, RAD_PROLE_NONE},     {"N", RAD_P_INT, RAD_REQUIRED, RAD_PROLE_NONE},
#ifdef TK_SCHEMA_OTHER
    {"K", RAD_P_F64, RAD_REQUIRED, RAD_PROLE_NONE},
#else
    {"K", RAD_P_INT, RAD_REQUIRED, RAD_PROLE_NONE},
#endif
    {"dtype", RAD_P_STR, RAD_REQUIRED, RAD_PROLE_NONE}, {"split", RAD_P_INT, RAD_DERIVED, RAD_PROLE_NONE},
};
const RadOperandSpec gemm_opds[] = {{"x", RAD_OPD_IN, 0}, {"w", RAD_OPD_WEIGHT, 0}, {"y", RAD_OPD_OUT, 0}};
const RadOpSchema schemas[] = {{"t_gemm", gemm_params, 5, gemm_opds, 3, "y = x . w^T (test op)"}};

#if TK_ROWS == 1
const RadConstraint c_small[] = {RAD_CLE("M", 64), RAD_CIN("dtype", "bf16 f32")};
const RadConstraint c_big[] = {RAD_CGE("M", 65), RAD_CLE("M", 4096), RAD_CIN("dtype", "bf16")};
const RadConstraint c_k128[] = {RAD_CLE("M", 16), RAD_CDIV("K", 128), RAD_CEQ("split", 4)};
const RadConstraint c_p2p[] = {RAD_CEQ(RAD_FACT_P2P, 1)};
const RadKernelInfo rows[] = {
    {"small", "t_gemm", "gemm", "", "M<=64", "bf16,f32", RAD_DOMAIN_HOST, 10, c_small, 2, 0, noop_launch},
    {"big", "t_gemm", "gemm", "", "65<=M<=4096", "bf16", RAD_DOMAIN_HOST, 10, c_big, 3, 0, noop_launch},
    {"k128", "t_gemm", "gemm", "", "M<=16, K%128", "any", RAD_DOMAIN_HOST, 50, c_k128, 3, 0, noop_launch},
    {"any", "t_gemm", "gemm", "", "any", "any", RAD_DOMAIN_HOST, 1, nullptr, 0, 0, noop_launch},
    {"p2p_only", "t_gemm", "gemm", "", "any", "any", RAD_DOMAIN_HOST, 99, c_p2p, 1, 0, noop_launch},
    {"device", "t_gemm", "gemm", "", "any", "any", RAD_DOMAIN_DEVICE, 200, nullptr, 0, 0, noop_launch},
};
#else
const RadKernelInfo rows[] = {
    {"all", "t_gemm", "gemm", "", "any", "any", RAD_DOMAIN_HOST, 5, nullptr, 0, 0, noop_launch},
};
#endif

}  // namespace

#ifndef TK_LAYOUT_SKEW
RAD_PLUGIN_ABI_LAYOUT_EXPORT
#endif

extern "C" {

RAD_EXPORT uint32_t rad_plugin_abi_version(void) {
#ifdef TK_ABI_SKEW
    return RAD_ABI_VERSION + 1;
#else
    return RAD_ABI_VERSION;
#endif
}

#ifdef TK_LAYOUT_SKEW
RAD_EXPORT uint64_t rad_plugin_abi_layout(void) { return RAD_ABI_LAYOUT_FINGERPRINT ^ 0x5a5a; }
#endif

RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_KERNEL, TK_NAME, "0.1", "loader test library", "host"};
    return &info;
}

#ifdef TK_DECLINE
RAD_EXPORT int rad_plugin_open(const RadMachine*) { return RAD_E_UNSUPPORTED; }
#endif
#ifdef TK_REFERENCE
RAD_EXPORT int rad_plugin_reference(void) { return 1; }
#endif

RAD_EXPORT int rad_kernel_schema_count(void) { return 1; }
RAD_EXPORT const RadOpSchema* rad_kernel_schema_at(int i) { return i == 0 ? &schemas[0] : nullptr; }
RAD_EXPORT int rad_kernel_count(void) { return static_cast<int>(sizeof rows / sizeof rows[0]); }
RAD_EXPORT const RadKernelInfo* rad_kernel_at(int i) { return &rows[i]; }
}
