// k_rope.cu: rotary embedding in place. The frequencies are libref's, computed on the host from
// the op's parameters (rad_rope_freqs.h) and passed by value, so no launch reads host memory and
// a recorded graph replays with the same frequencies.
#include <radiance/kernels/rad_rope_freqs.h>

#include "k_common.h"

namespace gpu {
namespace {

constexpr int kMaxHalf = 128;  // rot_dim <= 256
struct Freqs {
    float inv[kMaxHalf];
};

__global__ void k_rope(float* x, int64_t px, const int32_t* pos, int n_head, int head_dim, int half, int neox, float attn,
                       Freqs f) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t i = blockIdx.x;
    const float p = static_cast<float>(pos[i]);
    for (int t = blockIdx.y * blockDim.x + threadIdx.x; t < n_head * half; t += gridDim.y * blockDim.x) {
        const int h = t / half, j = t % half;
        float* v = x + i * px + static_cast<int64_t>(h) * head_dim;
        const float ang = p * f.inv[j];
        const float c = cosf(ang) * attn, s = sinf(ang) * attn;
        const int ia = neox ? j : 2 * j, ib = neox ? j + half : 2 * j + 1;
        const float va = v[ia], vb = v[ib];
        v[ia] = va * c - vb * s;
        v[ib] = vb * c + va * s;
    }
}

}  // namespace

int rope(const RadArgs* a) {
    RadTensor* x = rad_arg_out(a, 0);
    const RadTensor* pos = rad_arg_in(a, 1);
    if (!x || !pos || x->dtype != RAD_F32 || pos->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), n_head = rad_args_geti(a, "n_head"), hd = rad_args_geti(a, "head_dim");
    const int64_t rot = rad_args_geti(a, "rot_dim");
    if (rot <= 0 || rot % 2 || rot > hd || rot / 2 > kMaxHalf) return RAD_E_SHAPE;
    RadRopeFreqs rf;
    if (!rad_rope_freqs(a, rot, &rf)) return RAD_E_UNSUPPORTED;
    Freqs f{};
    for (int64_t j = 0; j < rot / 2; ++j) f.inv[j] = rf.inv[static_cast<size_t>(j)];
    const int neox = rad_args_gets_or(a, "layout", "neox")[0] == 'n';
    // Rows on x, each row's (head, pair) rotations over y: a decode row is still many blocks.
    const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(ceil_div(n_head * (rot / 2), 128)));
    gpu_launch(k_rope, grid, 128, 0, stream_of(a), static_cast<float*>(x->data), pitch_elems(x),
                                                                static_cast<const int32_t*>(pos->data),
                                                                static_cast<int>(n_head), static_cast<int>(hd),
                                                                static_cast<int>(rot / 2), neox, rf.attn, f);
    return launched();
}

}  // namespace gpu
