#include "ref_util.h"

int ref_add(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *b = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!ref::is_f32(x) || !ref::is_f32(b) || !ref::is_f32(y)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    for (int64_t i = 0; i < n; ++i) {
        const float* p = ref::row<const float>(x, i);
        const float* q = ref::row<const float>(b, i);
        float* o = ref::row<float>(y, i);
        for (int64_t j = 0; j < dim; ++j) o[j] = p[j] + q[j];
    }
    return RAD_OK;
}

int ref_gather_rows(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *ids = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!ref::is_f32(x) || !ref::is_f32(y) || !ids || ids->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const int32_t* id = static_cast<const int32_t*>(ids->data);
    for (int64_t i = 0; i < n; ++i) {
        if (id[i] < 0 || (x->rank > 0 && id[i] >= x->shape[0])) return RAD_E_ARG;
        const float* src = ref::row<const float>(x, id[i]);
        float* dst = ref::row<float>(y, i);
        for (int64_t j = 0; j < dim; ++j) dst[j] = src[j];
    }
    return RAD_OK;
}
