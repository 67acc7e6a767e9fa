// launch_norm.cpp: the rms_norm and layer_norm rows (y may alias x).
#include <vector>

#include "launch_util.h"

namespace {

using namespace cpu;

// A layer_norm bias of another dtype than its weight: both widened to f32 here, so the kernel
// reads one dtype (models store them alike; this keeps the odd case correct).
void widen(const RadTensor* t, int64_t n, std::vector<float>& out) {
    out.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) out[j] = rad_load_f32(t->dtype, t->data, j);
}

}  // namespace

int cpu_rms_norm(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!is_f32(x) || !w || !is_f32(y) || !is_float_dtype(w->dtype)) return RAD_E_DTYPE;
    NormArgs n{};
    n.x = rows_in(x);
    n.y = rows_out(y);
    n.w = w->data;
    n.wdt = w->dtype;
    n.dim = rad_args_geti(a, "dim");
    n.groups = rad_args_geti_or(a, "groups", 1);
    n.eps = static_cast<float>(rad_args_getf_or(a, "eps", 1e-6));
    n.unit_offset = rad_args_geti_or(a, "unit_offset", 0) != 0;
    if (n.dim <= 0 || n.groups <= 0) return RAD_E_SHAPE;
    const int64_t rows = rad_args_geti(a, "n");
    for_rows(rows, 3.0 * static_cast<double>(n.dim * n.groups), kernels().rms_norm, n);
    return RAD_OK;
}

int cpu_layer_norm(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *b = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!is_f32(x) || !w || !is_f32(y) || !is_float_dtype(w->dtype)) return RAD_E_DTYPE;
    if (b && !is_float_dtype(b->dtype)) return RAD_E_DTYPE;
    NormArgs n{};
    n.x = rows_in(x);
    n.y = rows_out(y);
    n.dim = rad_args_geti(a, "dim");
    n.groups = 1;
    n.eps = static_cast<float>(rad_args_getf_or(a, "eps", 1e-5));
    if (n.dim <= 0) return RAD_E_SHAPE;
    n.w = w->data;
    n.wdt = w->dtype;
    n.b = b ? b->data : nullptr;
    n.bdt = b ? b->dtype : w->dtype;
    static thread_local std::vector<float> wf, bf;
    if (b && b->dtype != w->dtype) {
        widen(w, n.dim, wf);
        widen(b, n.dim, bf);
        n.w = wf.data();
        n.b = bf.data();
        n.wdt = n.bdt = RAD_F32;
    }
    for_rows(rad_args_geti(a, "n"), 4.0 * static_cast<double>(n.dim), kernels().layer_norm, n);
    return RAD_OK;
}
