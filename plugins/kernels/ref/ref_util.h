// ref_util.h: operand access shared by libref's kernels. Reference code favours the obvious loop.
#pragma once
#include <radiance/rad_plugin.h>

#include <cstdint>

namespace ref {

// Row i of a row-major operand, honouring its row pitch.
template <typename T>
inline T* row(const RadTensor* t, int64_t i) {
    return reinterpret_cast<T*>(static_cast<char*>(t->data) + i * rad_tensor_row_pitch(t));
}

// Element (i, j) of a weight of any float dtype, widened to f32 (weights are dense, no pitch).
inline float wload(const RadTensor* w, int64_t i, int64_t j, int64_t cols) { return rad_load_f32(w->dtype, w->data, i * cols + j); }

inline bool is_f32(const RadTensor* t) { return t && t->dtype == RAD_F32; }

}  // namespace ref

// Every kernel's entry point, declared for the row table in rows.cpp.
int ref_embed(const RadArgs* a);
int ref_rms_norm(const RadArgs* a);
int ref_layer_norm(const RadArgs* a);
int ref_gemm(const RadArgs* a);
int ref_gemm_q(const RadArgs* a);
int ref_rope(const RadArgs* a);
int ref_attention(const RadArgs* a);
int ref_swiglu(const RadArgs* a);
int ref_geglu(const RadArgs* a);
int ref_gelu(const RadArgs* a);
int ref_softcap(const RadArgs* a);
int ref_add(const RadArgs* a);
int ref_gather_rows(const RadArgs* a);
int ref_all_reduce(const RadArgs* a);
int ref_all_gather(const RadArgs* a);
int ref_argmax(const RadArgs* a);
int ref_sample(const RadArgs* a);
int ref_moe_mlp(const RadArgs* a);
