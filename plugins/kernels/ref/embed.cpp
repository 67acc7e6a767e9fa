#include "ref_util.h"

int ref_embed(const RadArgs* a) {
    const RadTensor* ids = rad_arg_in(a, 0);
    const RadTensor* table = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!ids || !table || !ref::is_f32(y) || ids->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), dim = rad_args_geti(a, "dim"), vocab = rad_args_geti(a, "vocab");
    const float scale = static_cast<float>(rad_args_getf_or(a, "scale", 1.0));
    const int32_t* id = static_cast<const int32_t*>(ids->data);
    for (int64_t i = 0; i < n; ++i) {
        if (id[i] < 0 || id[i] >= vocab) return RAD_E_ARG;
        float* out = ref::row<float>(y, i);
        for (int64_t j = 0; j < dim; ++j) out[j] = ref::wload(table, id[i], j, dim) * scale;
    }
    return RAD_OK;
}
