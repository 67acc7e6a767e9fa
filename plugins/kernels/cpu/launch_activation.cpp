// launch_activation.cpp: the swiglu, geglu, gelu and softcap rows.
#include <cmath>
#include <cstring>

#include "launch_util.h"

namespace {

using namespace cpu;

int run(const RadArgs* a, int kind) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!is_f32(x) || !is_f32(y)) return RAD_E_DTYPE;
    ActArgs args{rows_in(x), rows_out(y), rad_args_geti(a, "dim"), kind};
    if (args.dim < 0) return RAD_E_SHAPE;
    // exp and a division per element: about 20 element operations.
    for_rows(rad_args_geti(a, "n"), 20.0 * static_cast<double>(args.dim), kernels().act, args);
    return RAD_OK;
}

}  // namespace

int cpu_swiglu(const RadArgs* a) { return run(a, kSwiglu); }
int cpu_geglu(const RadArgs* a) { return run(a, kGeglu); }
// softcap: the logits rows of a step only, so one thread and libref's scalar loop (std::tanh).
int cpu_softcap(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!is_f32(x) || !is_f32(y)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const float cap = static_cast<float>(rad_args_getf(a, "cap"));
    if (!(cap > 0.0f)) return RAD_E_ARG;
    const RowsIn in = rows_in(x);
    const RowsOut out = rows_out(y);
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < dim; ++j) out.row(i)[j] = cap * std::tanh(in.row(i)[j] / cap);
    return RAD_OK;
}
int cpu_gelu(const RadArgs* a) { return run(a, std::strcmp(rad_args_gets_or(a, "approx", "none"), "tanh") ? kGeluErf : kGeluTanh); }
