// Rotary embeddings with transformers' frequency initialisers (default, linear, llama3, yarn,
// longrope, whose rows pick their factors by their sequence's last position in the step),
// computed in f32 the way torch computes them so the reference matches bit for bit where it can.
#include <cmath>
#include <cstring>
#include <vector>

#include <radiance/kernels/rad_rope_freqs.h>

#include "ref_util.h"

int ref_rope(const RadArgs* a) {
    RadTensor* x = rad_arg_out(a, 0);
    const RadTensor* pos = rad_arg_in(a, 1);
    if (!ref::is_f32(x) || !pos || pos->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), heads = rad_args_geti(a, "n_head"), hd = rad_args_geti(a, "head_dim");
    const int64_t rot = rad_args_geti_or(a, "rot_dim", hd);
    if (rot <= 0 || rot > hd || rot % 2) return RAD_E_SHAPE;
    const bool gptj = !std::strcmp(rad_args_gets_or(a, "layout", "neox"), "gptj");
    RadRopeFreqs f;
    if (!rad_rope_freqs(a, rot, &f)) return RAD_E_ARG;
    const int32_t* p = static_cast<const int32_t*>(pos->data);
    const RadTensor* cu = rad_arg_in(a, 2);  // optional: each row's sequence (longrope)
    if (cu && cu->dtype != RAD_I32) return RAD_E_DTYPE;
    const int32_t* cus = cu ? static_cast<const int32_t*>(cu->data) : nullptr;
    const int64_t n_seq = cu ? rad_tensor_elems(cu) - 1 : 0;
    const int64_t half = rot / 2;
    std::vector<float> c(static_cast<size_t>(half)), s(static_cast<size_t>(half));
    for (int64_t i = 0; i < n; ++i) {
        const float* inv = rad_rope_row_is_long(f.long_from, p, cus, n_seq, i) ? f.inv_long.data() : f.inv.data();
        for (int64_t j = 0; j < half; ++j) {
            const float ang = static_cast<float>(p[i]) * inv[j];
            c[j] = static_cast<float>(std::cos(static_cast<double>(ang))) * f.attn;
            s[j] = static_cast<float>(std::sin(static_cast<double>(ang))) * f.attn;
        }
        float* r = ref::row<float>(x, i);
        for (int64_t h = 0; h < heads; ++h) {
            float* v = r + h * hd;
            for (int64_t j = 0; j < half; ++j) {
                const int64_t ia = gptj ? 2 * j : j, ib = gptj ? 2 * j + 1 : j + half;
                const float va = v[ia], vb = v[ib];
                v[ia] = va * c[j] - vb * s[j];
                v[ib] = vb * c[j] + va * s[j];
            }
        }
    }
    return RAD_OK;
}
