// k_sample.cu: drawing tokens where the logits are, so only a token id per row crosses to the
// host (docs/OPS.md `sample`). Rows cut to few tokens take the pre-filter over many blocks
// (k_sample_prefilter.cu), the rest the one-block sampler (k_sample_row.h); greedy picking is
// k_argmax.cu's.
#include "k_sample_prefilter.h"
#include "k_sample_row.h"

namespace gpu {

namespace {

using block_sampler::kSampleThreads;
using block_sampler::sample_row;
using block_sampler::Shared;

__global__ void __launch_bounds__(kSampleThreads) k_sample(const float* x, int64_t px, const float* cfg, int64_t pcfg, const double* u,
                                                           int32_t* y, int64_t vocab, const uint32_t* mask, int64_t pmask) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ Shared sh;
    sample_row(x, px, cfg, pcfg, u, y, vocab, mask, pmask, sh);
}

}  // namespace

uint64_t sample_scratch(const RadArgs* geom) { return sample_prefilter_scratch(rad_args_geti(geom, "n")); }

int sample(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *cfg = rad_arg_in(a, 1), *u = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!x || !cfg || !u || !y || x->dtype != RAD_F32 || cfg->dtype != RAD_F32 || u->dtype != RAD_F64 || y->dtype != RAD_I32)
        return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), vocab = rad_args_geti(a, "vocab");
    if (vocab <= 0 || vocab > INT_MAX) return RAD_E_ARG;
    if (n <= 0) return RAD_OK;
    const RadTensor* mask = rad_arg_in(a, 4);  // structured output's, optional
    if (mask && (mask->dtype != RAD_U32 || mask->rank != 2 || mask->shape[1] * 32 < vocab)) return RAD_E_DTYPE;
    if (launch_sample_prefilter(a, n, vocab)) return launched();
    gpu_launch(k_sample, static_cast<unsigned>(n), kSampleThreads, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
               static_cast<const float*>(cfg->data), pitch_elems(cfg), static_cast<const double*>(u->data), static_cast<int32_t*>(y->data),
               vocab, mask ? static_cast<const uint32_t*>(mask->data) : nullptr, mask ? pitch_elems(mask) : int64_t{0});
    return launched();
}

}  // namespace gpu
