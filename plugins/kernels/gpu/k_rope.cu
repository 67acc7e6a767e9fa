// k_rope.cu: rotary embedding in place, with libref's frequencies by value (k_rope.h).
#include "k_rope.h"

#include <radiance/kernels/rad_rope_freqs.h>

namespace gpu {
namespace {

__global__ void k_rope(float* x, int64_t px, const int32_t* pos, const int32_t* cu, int n_seq, int n_head, int head_dim, RopeTable t) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.x;
    const int32_t p = pos[i];
    const bool long_row = rad_rope_row_is_long(t.long_from, pos, cu, n_seq, i);
    for (int e = blockIdx.y * blockDim.x + threadIdx.x; e < n_head * t.half; e += gridDim.y * blockDim.x) {
        const int h = e / t.half, j = e % t.half;
        float* v = x + i * px + static_cast<int64_t>(h) * head_dim;
        float c, s;
        rope_angle(t, p, j, c, s, long_row);
        rope_pair(t, v, j, c, s);
    }
}

}  // namespace

bool rope_table(const RadArgs* a, int64_t rot, RopeTable* t) {
    if (rot <= 0 || rot % 2 || rot / 2 > kRopeMaxHalf) return false;
    RadRopeFreqs rf;
    if (!rad_rope_freqs(a, rot, &rf)) return false;
    *t = RopeTable{};
    for (int64_t j = 0; j < rot / 2; ++j) t->inv[j] = rf.inv[static_cast<size_t>(j)];
    t->attn = rf.attn;
    t->long_from = rf.long_from >= 0 ? static_cast<int>(std::min<int64_t>(rf.long_from, INT32_MAX)) : -1;
    for (size_t j = 0; j < rf.inv_long.size(); ++j) t->inv_long[j] = rf.inv_long[j];
    t->half = static_cast<int>(rot / 2);
    t->neox = rad_args_gets_or(a, "layout", "neox")[0] == 'n';
    return true;
}

int rope(const RadArgs* a) {
    RadTensor* x = rad_arg_out(a, 0);
    const RadTensor* pos = rad_arg_in(a, 1);
    if (!x || !pos || x->dtype != RAD_F32 || pos->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), n_head = rad_args_geti(a, "n_head"), hd = rad_args_geti(a, "head_dim");
    const int64_t rot = rad_args_geti(a, "rot_dim");
    if (rot <= 0 || rot % 2 || rot > hd || rot / 2 > kRopeMaxHalf) return RAD_E_SHAPE;
    RopeTable t;
    if (!rope_table(a, rot, &t)) return RAD_E_UNSUPPORTED;
    const RadTensor* cu = rad_arg_in(a, 2);  // optional: each row's sequence (longrope)
    if (cu && cu->dtype != RAD_I32) return RAD_E_DTYPE;
    // Rows on x, each row's (head, pair) rotations over y: a decode row is still many blocks.
    const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(ceil_div(n_head * t.half, 128)));
    gpu_launch(k_rope, grid, 128, 0, stream_of(a), static_cast<float*>(x->data), pitch_elems(x), static_cast<const int32_t*>(pos->data),
               cu ? static_cast<const int32_t*>(cu->data) : nullptr, cu ? static_cast<int>(rad_tensor_elems(cu) - 1) : 0,
               static_cast<int>(n_head), static_cast<int>(hd), t);
    return launched();
}

}  // namespace gpu
