#include <cmath>

#include "ref_util.h"

int ref_rms_norm(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    const RadTensor* w = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!ref::is_f32(x) || !w || !ref::is_f32(y)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const int64_t groups = rad_args_geti_or(a, "groups", 1);
    const float eps = static_cast<float>(rad_args_getf_or(a, "eps", 1e-6));
    const bool unit = rad_args_geti_or(a, "unit_offset", 0) != 0;
    for (int64_t i = 0; i < n; ++i) {
        const float* in = ref::row<const float>(x, i);
        float* out = ref::row<float>(y, i);
        for (int64_t g = 0; g < groups; ++g) {
            const float* v = in + g * dim;
            float* o = out + g * dim;
            float ss = 0.0f;
            for (int64_t j = 0; j < dim; ++j) ss += v[j] * v[j];
            const float r = 1.0f / std::sqrt(ss / static_cast<float>(dim) + eps);
            for (int64_t j = 0; j < dim; ++j) {
                float wj = rad_load_f32(w->dtype, w->data, j);
                o[j] = (v[j] * r) * (unit ? 1.0f + wj : wj);
            }
        }
    }
    return RAD_OK;
}

int ref_layer_norm(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    const RadTensor* w = rad_arg_in(a, 1);
    const RadTensor* b = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!ref::is_f32(x) || !w || !ref::is_f32(y)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const float eps = static_cast<float>(rad_args_getf_or(a, "eps", 1e-5));
    for (int64_t i = 0; i < n; ++i) {
        const float* v = ref::row<const float>(x, i);
        float* o = ref::row<float>(y, i);
        float mean = 0.0f;
        for (int64_t j = 0; j < dim; ++j) mean += v[j];
        mean /= static_cast<float>(dim);
        float var = 0.0f;
        for (int64_t j = 0; j < dim; ++j) var += (v[j] - mean) * (v[j] - mean);
        var /= static_cast<float>(dim);
        const float r = 1.0f / std::sqrt(var + eps);
        for (int64_t j = 0; j < dim; ++j) {
            float t = (v[j] - mean) * r * rad_load_f32(w->dtype, w->data, j);
            o[j] = b ? t + rad_load_f32(b->dtype, b->data, j) : t;
        }
    }
    return RAD_OK;
}
