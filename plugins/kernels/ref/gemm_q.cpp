#include <radiance/rad_decode.h>

#include <vector>

#include "ref_util.h"

// gemm_q (docs/OPS.md): each weight row decoded by the core's decoder from the planes given as
// operands (the affine scheme rebuilt from the op's parameters), then gemm's loop: the oracle is
// "decode, then the plain gemm's arithmetic". `min` (operand 6, after y: a GGUF K-quant's offset)
// is the decoder's "min" plane, of the scale's dtype and grouping; `perm` (operand 7: GPTQ
// act-order's column order) its `t.perm` table under the "perm" transform, so each row is decoded
// in the weight's own column order and summed exactly as the dequantised weight's gemm sums (the
// same bits as serving that weight plain). A table that is not a permutation fails the decode.
int ref_gemm_q(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *scale = rad_arg_in(a, 2), *zero = rad_arg_in(a, 3),
                    *bias = rad_arg_in(a, 4);
    RadTensor* y = rad_arg_out(a, 5);
    const RadTensor *mins = rad_arg_in(a, 6), *perm = rad_arg_in(a, 7);
    const int qt = rad_dtype_from_name(rad_args_gets_or(a, "qtype", "")), st = rad_dtype_from_name(rad_args_gets_or(a, "sdtype", ""));
    if (!ref::is_f32(x) || !w || !scale || !ref::is_f32(y) || qt == RAD_DT_NONE || w->dtype != qt || scale->dtype != st) return RAD_E_DTYPE;
    if ((zero && zero->dtype != qt) || (mins && mins->dtype != st)) return RAD_E_DTYPE;
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N"), K = rad_args_geti(a, "K");
    const int64_t g = rad_args_geti(a, "group"), gr = rad_args_geti(a, "group_rows");
    if (g <= 0 || gr <= 0 || w->rank != 2 || w->shape[0] != N || w->shape[1] != K) return RAD_E_SHAPE;
    const int64_t sr = (N + gr - 1) / gr, sc = (K + g - 1) / g;
    if (scale->rank != 2 || scale->shape[0] != sr || scale->shape[1] != sc) return RAD_E_SHAPE;
    for (const RadTensor* t : {zero, mins})
        if (t && (t->rank != 2 || t->shape[0] != sr || t->shape[1] != sc)) return RAD_E_SHAPE;
    if (perm && perm->dtype != RAD_I32) return RAD_E_DTYPE;
    if (perm && (rad_tensor_elems(perm) != K || (perm->rank == 2 && perm->shape[0] != 1) || perm->rank > 2)) return RAD_E_SHAPE;
    RadEncoding e = rad_encoding_affine(qt);
    rad_encoding_add_tiled(&e, "scale", st, gr, g);
    const void* planes[5] = {w->data, scale->data};
    int np = 2;
    if (zero) rad_encoding_add_tiled(&e, "zero", qt, gr, g), planes[np++] = zero->data;
    if (mins) rad_encoding_add_tiled(&e, "min", st, gr, g), planes[np++] = mins->data;
    if (perm) rad_encoding_add_perm(&e, K), planes[np++] = perm->data;  // the decoder checks it is a permutation
    std::vector<float> wrow(static_cast<size_t>(K));
    for (int64_t nn = 0; nn < N; ++nn) {
        if (rad_decode_rows(&e, N, K, nn, 1, planes, wrow.data()) != RAD_OK) return RAD_E_ARG;
        const float b = bias ? rad_load_f32(bias->dtype, bias->data, nn) : 0.0f;
        for (int64_t m = 0; m < M; ++m) {
            const float* xr = ref::row<const float>(x, m);
            float acc = 0.0f;
            for (int64_t k = 0; k < K; ++k) acc += xr[k] * wrow[k];
            ref::row<float>(y, m)[nn] = bias ? acc + b : acc;
        }
    }
    return RAD_OK;
}
