// libnoop: every conventional op, doing nothing. It exists to measure what the engine, the
// transport and the workers cost per step, with no arithmetic in the way. Never installed into a
// serving home (rad-stepbench points RADIANCE_HOME at its own folder).
#include <radiance/rad_ops.h>

namespace {

int nothing(const RadArgs*) { return RAD_OK; }

const RadConstraint c_block16[] = {RAD_CEQ("block", 16)};

#define ROW(op) \
    { "noop_" op, op, op, "nothing", "any", "any", RAD_DOMAIN_HOST, 0, nullptr, 0, 0, nothing }

const RadKernelInfo rows[] = {
    ROW("embed"),       ROW("rms_norm"),
    ROW("layer_norm"),  ROW("gemm"),
    ROW("rope"),        {"noop_attention", "attention", "attention", "nothing", "any", "any", RAD_DOMAIN_HOST, 0, c_block16, 1, 0, nothing},
    ROW("swiglu"),      ROW("geglu"),
    ROW("gelu"),        ROW("add"),
    ROW("gather_rows"), ROW("all_reduce"),
};

}  // namespace

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT

extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_KERNEL, "libnoop", "0.1", "ops that do nothing (step overhead benchmark)", "host"};
    return &info;
}
RAD_CONVENTIONAL_KERNEL_EXPORTS(rows)
}
