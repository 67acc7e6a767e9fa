// k_rope.cu: rotary embedding in place, with libref's frequencies by value (k_rope.h).
#include "k_rope.h"

#include <radiance/kernels/rad_rope_freqs.h>

namespace gpu {
namespace {

__global__ void k_rope(float* x, int64_t px, const int32_t* pos, int n_head, int head_dim, RopeTable t) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.x;
    const int32_t p = pos[i];
    for (int e = blockIdx.y * blockDim.x + threadIdx.x; e < n_head * t.half; e += gridDim.y * blockDim.x) {
        const int h = e / t.half, j = e % t.half;
        float* v = x + i * px + static_cast<int64_t>(h) * head_dim;
        float c, s;
        rope_angle(t, p, j, c, s);
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
    // Rows on x, each row's (head, pair) rotations over y: a decode row is still many blocks.
    const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(ceil_div(n_head * t.half, 128)));
    gpu_launch(k_rope, grid, 128, 0, stream_of(a), static_cast<float*>(x->data), pitch_elems(x), static_cast<const int32_t*>(pos->data),
               static_cast<int>(n_head), static_cast<int>(hd), t);
    return launched();
}

}  // namespace gpu
