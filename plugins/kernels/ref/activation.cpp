#include <cmath>
#include <cstring>

#include "ref_util.h"

namespace {
float silu(float v) { return v / (1.0f + std::exp(-v)); }
float gelu_tanh(float v) {
    const float k = 0.7978845608028654f;  // sqrt(2 / pi)
    return 0.5f * v * (1.0f + std::tanh(k * (v + 0.044715f * v * v * v)));
}
float gelu_erf(float v) { return 0.5f * v * (1.0f + std::erf(v / 1.4142135623730951f)); }

template <float (*Act)(float)>
int glu(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!ref::is_f32(x) || !ref::is_f32(y)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    for (int64_t i = 0; i < n; ++i) {
        const float* in = ref::row<const float>(x, i);
        float* out = ref::row<float>(y, i);
        for (int64_t j = 0; j < dim; ++j) out[j] = Act(in[j]) * in[dim + j];
    }
    return RAD_OK;
}
}  // namespace

int ref_swiglu(const RadArgs* a) { return glu<silu>(a); }
int ref_geglu(const RadArgs* a) { return glu<gelu_tanh>(a); }

int ref_softcap(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!ref::is_f32(x) || !ref::is_f32(y)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const float cap = static_cast<float>(rad_args_getf(a, "cap"));
    if (!(cap > 0.0f)) return RAD_E_ARG;
    for (int64_t i = 0; i < n; ++i) {
        const float* in = ref::row<const float>(x, i);
        float* out = ref::row<float>(y, i);
        for (int64_t j = 0; j < dim; ++j) out[j] = cap * std::tanh(in[j] / cap);
    }
    return RAD_OK;
}

int ref_gelu(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!ref::is_f32(x) || !ref::is_f32(y)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim");
    const bool tanh_form = !std::strcmp(rad_args_gets_or(a, "approx", "none"), "tanh");
    for (int64_t i = 0; i < n; ++i) {
        const float* in = ref::row<const float>(x, i);
        float* out = ref::row<float>(y, i);
        for (int64_t j = 0; j < dim; ++j) out[j] = tanh_form ? gelu_tanh(in[j]) : gelu_erf(in[j]);
    }
    return RAD_OK;
}
