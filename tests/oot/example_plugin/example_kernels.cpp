// The smallest complete kernel library: one op (`oot_axpy`, y = a*x + y) with one host row.
#include <radiance/rad_plugin.h>

namespace {

int axpy(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const double alpha = rad_args_getf_or(a, "alpha", 1.0);
    const int64_t n = rad_args_geti(a, "n");
    const float* xs = static_cast<const float*>(x->data);
    float* ys = static_cast<float*>(y->data);
    for (int64_t i = 0; i < n; ++i) ys[i] = static_cast<float>(alpha) * xs[i] + ys[i];
    return RAD_OK;
}

const RadParamSpec params[] = {{"n", RAD_P_INT, RAD_REQUIRED, RAD_PROLE_NONE}, {"alpha", RAD_P_F64, RAD_OPTIONAL, RAD_PROLE_NONE}};
const RadOperandSpec opds[] = {{"x", RAD_OPD_IN, 0}, {"y", RAD_OPD_INOUT, 0}};
const RadOpSchema schemas[] = {{"oot_axpy", params, 2, opds, 2, "y = alpha * x + y over n f32 values"}};
const RadKernelInfo rows[] = {
    {"axpy_host", "oot_axpy", "blas1", "y = alpha*x + y", "any n", "f32", RAD_DOMAIN_HOST, 10, nullptr, 0, 0, axpy}};

}  // namespace

RAD_PLUGIN_ABI_VERSION_EXPORT
RAD_PLUGIN_ABI_LAYOUT_EXPORT
extern "C" {
RAD_EXPORT const RadPluginInfo* rad_plugin_info(void) {
    static const RadPluginInfo info = {RAD_PLUGIN_KERNEL, "example_kernels", "0.1", "out-of-tree example", "host"};
    return &info;
}
RAD_EXPORT int rad_kernel_schema_count(void) { return 1; }
RAD_EXPORT const RadOpSchema* rad_kernel_schema_at(int i) { return i == 0 ? &schemas[0] : nullptr; }
RAD_EXPORT int rad_kernel_count(void) { return 1; }
RAD_EXPORT const RadKernelInfo* rad_kernel_at(int i) { return i == 0 ? &rows[0] : nullptr; }
}
