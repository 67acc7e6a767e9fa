// k_argmax.cu: greedy picking on the card, so only a token id per row crosses to the host: the
// lowest index of the largest value; a block per row, or for few rows several blocks a row and a
// warp per row picking among their bests.
#include "k_pick.h"

namespace gpu {

namespace {

using pick::better;
using pick::block_best;
using pick::sane;

// Rows split over several blocks where few rows would leave the card idle (one block reading a
// 128k-vocabulary row took 55 us, Nsight Compute, H200): each part's best into scratch, then a
// warp per row picks among them. `better` is associative and commutative, so any split gives the
// single block's answer.
constexpr int kArgmaxMaxParts = 64;

// Scratch for n rows: a value and an index per part.
uint64_t argmax_scratch_bytes(int64_t n) { return static_cast<uint64_t>(n > 0 ? n : 1) * kArgmaxMaxParts * (sizeof(float) + sizeof(int)); }

int argmax_parts(int64_t n, int64_t vocab) {
    const int64_t want = 2 * static_cast<int64_t>(sm_count() > 0 ? sm_count() : 132);
    int64_t p = (want + n - 1) / n;
    p = p < 1 ? 1 : p > kArgmaxMaxParts ? kArgmaxMaxParts : p;
    const int64_t by_vocab = (vocab + 1023) / 1024;  // at least 1024 logits a part
    return static_cast<int>(p < by_vocab ? p : by_vocab);
}

// Block (row, part) takes part `part` of the row's ids; with one part it writes the token (only
// -inf entries: every one ties at -inf and the lowest index wins, token 0 as the sampler), else
// its best for k_argmax_final.
__global__ void k_argmax(const float* x, int64_t px, int64_t vocab, int parts, float* pv, int* pi, int32_t* y, const uint32_t* mask,
                         int64_t pmask) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float sv[32];
    __shared__ int si[32];
    const int64_t row = blockIdx.x, per = (vocab + parts - 1) / parts;
    const int64_t begin = blockIdx.y * per, end = min(vocab, begin + per);
    const float* xr = x + row * px;
    const uint32_t* mr = mask ? mask + row * pmask : nullptr;  // structured output: clear bits count as -inf
    float v = -INFINITY;
    int idx = INT_MAX;
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x)
        better(v, idx, pick::allowed(mr, j) ? sane(xr[j]) : -INFINITY, static_cast<int>(j));
    block_best(v, idx, sv, si);
    if (threadIdx.x != 0) return;
    if (parts == 1) {
        y[row] = idx == INT_MAX ? 0 : idx;
    } else {
        pv[row * parts + blockIdx.y] = v;
        pi[row * parts + blockIdx.y] = idx;
    }
}

__global__ void k_argmax_final(const float* pv, const int* pi, int32_t* y, int parts) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t row = blockIdx.x;
    float v = -INFINITY;
    int idx = INT_MAX;
    for (int p = threadIdx.x; p < parts; p += kWarpSize) better(v, idx, pv[row * parts + p], pi[row * parts + p]);
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) better(v, idx, gpu_shfl_xor(v, m), gpu_shfl_xor(idx, m));
    if (threadIdx.x == 0) y[row] = idx == INT_MAX ? 0 : idx;
}

}  // namespace

int argmax(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), vocab = rad_args_geti(a, "vocab");
    if (n <= 0) return RAD_OK;
    const auto* xp = static_cast<const float*>(x->data);
    auto* yp = static_cast<int32_t*>(y->data);
    const RadTensor* mask = rad_arg_in(a, 2);
    if (mask && (mask->dtype != RAD_U32 || mask->rank != 2 || mask->shape[1] * 32 < vocab)) return RAD_E_DTYPE;
    const auto* mp = mask ? static_cast<const uint32_t*>(mask->data) : nullptr;
    const int64_t pm = mask ? pitch_elems(mask) : 0;
    const int parts = a->scratch_bytes >= argmax_scratch_bytes(n) ? argmax_parts(n, vocab) : 1;
    if (parts == 1) {  // a block of 1024 per row
        gpu_launch(k_argmax, dim3(static_cast<unsigned>(n), 1), 1024, 0, stream_of(a), xp, pitch_elems(x), vocab, 1,
                   static_cast<float*>(nullptr), static_cast<int*>(nullptr), yp, mp, pm);
        return launched();
    }
    auto* pv = static_cast<float*>(a->scratch);
    auto* pi = reinterpret_cast<int*>(pv + n * kArgmaxMaxParts);
    gpu_launch(k_argmax, dim3(static_cast<unsigned>(n), static_cast<unsigned>(parts)), 256, 0, stream_of(a), xp, pitch_elems(x), vocab,
               parts, pv, pi, yp, mp, pm);
    gpu_launch(k_argmax_final, static_cast<unsigned>(n), kWarpSize, 0, stream_of(a), static_cast<const float*>(pv),
               static_cast<const int*>(pi), yp, parts);
    return launched();
}

uint64_t argmax_scratch(const RadArgs* geom) { return argmax_scratch_bytes(rad_args_geti(geom, "n")); }

}  // namespace gpu
