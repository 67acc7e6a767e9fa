// k_gemm.cu: y[M, N] = x[M, K] . w[N, K]^T (+ bias), f32 activations, f32/bf16/f16 weights.
//
// Few rows (decode): the weights are read once at full memory speed by streaming kernels with
// 16-byte weight loads, the next ones in flight while these are multiplied, every x row reused
// across a thread's R columns: one or two rows a block per 4 columns splitting K, three to eight
// rows a warp per 4 columns walking K. Many rows (prefill): cuBLASLt on the tensor cores, after
// narrowing x to the weights' 16-bit type in scratch (f32 weights run cuBLASLt in full f32).
#include <radiance/kernels/rad_compose.h>

#include "k_common.h"
#include "k_phase.h"
#include "k_vec.h"

namespace gpu {
namespace {

// The R weight rows streamed for the columns from n0: rows n0.., or for GLU R/2 gate rows n0..
// and their up rows N + n0..; past the last column they repeat row N - 1 (its results are dropped).
template <typename W, int R, bool GLU>
__device__ __forceinline__ void weight_rows(const W* w, int64_t n0, int64_t N, int64_t K, const uint4* (&wrow)[R]) {
    constexpr int COLS = GLU ? R / 2 : R;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        const int64_t row = GLU ? (r < COLS ? min(n0 + r, N - 1) : N + min(n0 + r - COLS, N - 1)) : min(n0 + r, N - 1);
        wrow[r] = reinterpret_cast<const uint4*>(w + row * K);
    }
}

// M rows of x (compile-time, three to eight: one or two rows take k_gemv_block), R weight rows per
// warp. Vector path needs K % VN == 0 and aligned rows. GLU (gemm_swiglu): w stacks [gate | up] of
// N rows each; a warp's first R/2 rows are gate rows n0.., its last R/2 the matching up rows
// N + n0.., and it writes silu(gate) * up.
template <typename W, int M, int R, bool GLU = false, bool ADD = false>
__global__ void __launch_bounds__(256) k_gemv(const float* __restrict__ x, int64_t px, const W* __restrict__ w, const W* __restrict__ bias,
                                              float* __restrict__ y, int64_t py, int64_t N, int64_t K) {
    constexpr int VN = Vec<W>::kN;
    constexpr int COLS = GLU ? R / 2 : R;  // output columns per warp
    constexpr int U = 2;                   // chunks per lane per iteration: U * R loads of 16 bytes in flight
    const int lane = threadIdx.x % 32;
    const int64_t n0 = (static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32) * COLS;
    const int64_t chunks = K / VN;
    const uint4* wrow[R];
    weight_rows<W, R, GLU>(w, n0, N, K, wrow);
    auto load = [&](uint4(&raw)[U][R], int64_t at) { load_chunks<U, R, 32, false>(raw, wrow, at, chunks); };
    // The weights are no earlier kernel's output: the first loads go out before the wait for the
    // previous kernel (programmatic dependent launch), so a layer's weight stream starts while the
    // norm or attention before it drains.
    int64_t c = lane;
    uint4 cur[U][R];
    const bool any = n0 < N && c + 32 * (U - 1) < chunks;
    if (any) load(cur, c);
    gpu_grid_wait();
    gpu_grid_release();
    if (n0 >= N) return;
    float acc[M][R];
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int r = 0; r < R; ++r) acc[m][r] = 0.0f;
    // Two iterations' loads in flight: the next chunks load while this one is multiplied.
    for (; c + 32 * (U - 1) < chunks; c += 32 * U) {
        uint4 nxt[U][R];
        const bool more = c + 32 * U + 32 * (U - 1) < chunks;
        if (more) load(nxt, c + 32 * U);
#pragma unroll
        for (int u = 0; u < U; ++u) accumulate<W, M, R>(acc, cur[u], x, px, c + 32 * u);
        if (more) {
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < R; ++r) cur[u][r] = nxt[u][r];
        }
    }
    for (; c < chunks; c += 32) {
        uint4 tail[1][R];
        load_chunks<1, R, 32, false>(tail, wrow, c, chunks);
        accumulate<W, M, R>(acc, tail[0], x, px, c);
    }
    if constexpr (GLU) {
#pragma unroll
        for (int m = 0; m < M; ++m)
#pragma unroll
            for (int r = 0; r < COLS; ++r) {
                const float g = gpu_warp_sum(acc[m][r]), u = gpu_warp_sum(acc[m][r + COLS]);
                if (lane == 0 && n0 + r < N) y[m * py + n0 + r] = silu(g) * u;
            }
    } else {
#pragma unroll
        for (int m = 0; m < M; ++m)
#pragma unroll
            for (int r = 0; r < R; ++r) {
                const float s = gpu_warp_sum(acc[m][r]);
                if (lane == 0 && n0 + r < N) {
                    const float v = s + (bias ? gpu_to_f32(bias[n0 + r]) : 0.0f);
                    y[m * py + n0 + r] = ADD ? y[m * py + n0 + r] + v : v;  // ADD: gemm_add's epilogue
                }
            }
    }
}

// One or two rows (decode): a block of kBlockThreads owns R weight rows and all its threads split
// K, then sum through shared memory. With a warp per column pair the narrow projections
// (N = 4096, 6144) gave the card only 256-384 blocks and streamed at ~2.4 TB/s (Nsight Compute,
// H200); a block per R rows gives it N / R. GLU as in k_gemv (the first R/2 rows gate rows, the
// last R/2 their up rows): each column's sum is made exactly as the plain kernel makes it, so
// gemm_swiglu stays byte-identical to its chain gemm -> swiglu.
constexpr int kBlockThreads = 256;

// One chunk step a thread loaded ahead (U = 1: R loads of 16 bytes, twice, double buffered): half
// the registers of two steps, so four blocks fit on an SM instead of two (same bytes in flight an
// SM, and a block's exit leaves three streaming instead of one): batch-1 decode 218 -> 231 tok/s
// on the 8B shape (H200, 2026-12-02).
//
// The decode-path fusions:
// NORM (rms_norm_gemm, rms_norm_gemm_swiglu): x is the norm's input. The block multiplies
// x * nw by the weights and sums x^2 on the way (it reads every x value once), then scales its
// columns by the row's 1 / rms: y = rs * sum_k (x_k nw_k) w_nk (+ bias), the chain's value up to
// rounding (rs factored out of the sum), with no pass over x before the weights stream. A first
// version that made rs first, in rms_norm's exact order, cost each block a round trip and two
// barriers before its first product: batch-1 decode 232 -> 213 tok/s (8B shape, H200).
// ADD (gemm_add): y = y + the product (the chain's bytes), y the residual stream; a block's y
// values load right after the wait, not at the end.
// What a launch adds to the plain gemv: the norm's settings (NORM).
struct GemvOptions {
    const void* norm_w;  // NORM: the norm's weight (the projection's dtype)
    float eps;
    int unit;
#ifdef RAD_GPU_PHASES
    unsigned long long* ph;  // k_phase.h's slots of this launch (a measuring build only)
#endif
};

template <typename W, int M, int R, bool GLU = false, bool NORM = false, bool ADD = false>
__global__ void __launch_bounds__(kBlockThreads, 4)
    k_gemv_block(const float* __restrict__ x, int64_t px, const W* __restrict__ w, const W* __restrict__ bias, float* __restrict__ y,
                 int64_t py, int64_t N, int64_t K, GemvOptions opts) {
    constexpr int VN = Vec<W>::kN, T = kBlockThreads, WARPS = T / kWarpSize, U = 1;
    constexpr int COLS = GLU ? R / 2 : R;  // output columns per block
    const int64_t n0 = static_cast<int64_t>(blockIdx.x) * COLS;
    RAD_PHASE(opts.ph, 3, 0);
    const int64_t chunks = K / VN;
    const uint4* wrow[R];
    weight_rows<W, R, GLU>(w, n0, N, K, wrow);
    auto load = [&](uint4(&raw)[U][R], int64_t at) { load_chunks<U, R, T, true>(raw, wrow, at, chunks); };
    int64_t c = threadIdx.x;
    uint4 cur[U][R], nxt[U][R];
    // Weights are no earlier kernel's output (see k_gemv): the first two chunk steps go out before
    // the wait (the second in the registers the loop holds for it anyway), so a block made resident
    // during the previous kernel's tail has all of a K = 4,096 block's weights in flight there.
    // Batch-1 decode 241.5-241.8 -> 248.1-248.7 tok/s with the second step (8B shape, H200,
    // 2026-12-03); the output projection, which follows the attention chain, sending one step
    // instead: 247.6-247.9 against 248.5.
    load(cur, c);
    bool preloaded = false;
    if (c + T * U < chunks) {
        load(nxt, c + T * U);
        preloaded = true;
    }
    gpu_grid_wait();
    gpu_grid_release();
    RAD_PHASE(opts.ph, 3, 1);
    RowNorm<W, M> norm{static_cast<const W*>(opts.norm_w), opts.unit, {}};
    float resid = 0.0f;  // ADD: the y value this thread's epilogue adds to, loaded while the weights stream
    if constexpr (ADD) {
        const int m = threadIdx.x / COLS, r = threadIdx.x % COLS;
        if (threadIdx.x < M * COLS && n0 + r < N) resid = y[m * py + n0 + r];
    }
    float acc[M][R];
#pragma unroll
    for (int m = 0; m < M; ++m)
#pragma unroll
        for (int r = 0; r < R; ++r) acc[m][r] = 0.0f;
    for (; c < chunks; c += T * U) {
        const bool more = c + T * U < chunks;
        if (more && !preloaded) load(nxt, c + T * U);
        preloaded = false;
#pragma unroll
        for (int u = 0; u < U; ++u) {
            if (c + T * u >= chunks) break;
            accumulate<W, M, R, NORM>(acc, cur[u], x, px, c + T * u, &norm);
        }
        if (more) {
#pragma unroll
            for (int u = 0; u < U; ++u)
#pragma unroll
                for (int r = 0; r < R; ++r) cur[u][r] = nxt[u][r];
        }
    }
    constexpr int SLOTS = M * R + (NORM ? M : 0);  // the columns' partial sums, then the rows' sums of squares
    __shared__ float part[WARPS][SLOTS];
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    store_warp_sums<M, R>(acc, part, warp, lane);
    if constexpr (NORM) {
#pragma unroll
        for (int m = 0; m < M; ++m) {
            const float v = gpu_warp_sum(norm.ss[m]);
            if (lane == 0) part[warp][M * R + m] = v;
        }
    }
    __syncthreads();
    auto column = [&](int o) {
        float v = 0.0f;
#pragma unroll
        for (int i = 0; i < WARPS; ++i) v += part[i][o];
        return v;
    };
    for (int o = threadIdx.x; o < M * COLS; o += T) {
        const int m = o / COLS, r = o % COLS;
        if (n0 + r >= N) continue;
        // NORM: the row's 1 / rms, as rms_norm makes it from the sum of squares
        const float rs = NORM ? 1.0f / sqrtf(column(M * R + m) / static_cast<float>(K) + opts.eps) : 1.0f;
        if constexpr (GLU) {
            y[m * py + n0 + r] = silu(rs * column(m * R + r)) * (rs * column(m * R + r + COLS));
        } else {
            const float v = (NORM ? rs * column(m * R + r) : column(m * R + r)) + (bias ? gpu_to_f32(bias[n0 + r]) : 0.0f);
            y[m * py + n0 + r] = ADD ? resid + v : v;  // o < T: resid is this thread's
        }
    }
    RAD_PHASE(opts.ph, 3, 2);
}

// Any shape and alignment: one warp per (row, column), scalar loads.
template <typename W>
__global__ void k_gemv_scalar(const float* x, int64_t px, const W* w, const W* bias, float* y, int64_t py, int64_t M, int64_t N,
                              int64_t K) {
    gpu_grid_wait();
    gpu_grid_release();
    const int64_t t = static_cast<int64_t>(blockIdx.x) * (blockDim.x / 32) + threadIdx.x / 32;
    if (t >= M * N) return;
    const int64_t m = t / N, n = t % N;
    float s = 0.0f;
    for (int64_t k = threadIdx.x % 32; k < K; k += 32) s += x[m * px + k] * gpu_to_f32(w[n * K + k]);
    s = gpu_warp_sum(s);
    if (threadIdx.x % 32 == 0) y[m * py + n] = s + (bias ? gpu_to_f32(bias[n]) : 0.0f);
}

// RAD_E_UNSUPPORTED where a fusion has no kernel: NORM past two rows (ADD has both kernels).
template <typename W, int M, bool GLU, bool NORM = false, bool ADD = false>
int launch_gemv(const float* x, int64_t px, const W* w, const W* bias, float* y, int64_t py, int64_t N, int64_t K, gpuStream_t s,
                const GemvOptions& opts) {
    // One or two rows: the block kernel (kbench, H200: 1.2-1.4x faster at N = 4096/6144, K = 14336;
    // batch-1 decode 198.8 -> 214.5 tok/s against a warp per two columns, 2026-12-01); from three
    // rows the warp kernel, which reuses each x chunk over four weight rows where the block
    // kernel's x traffic grows with M (at M = 8 it was 1.3-1.7x slower).
    if constexpr (M <= 2) {
        constexpr int R = 4, COLS = GLU ? R / 2 : R;
        const unsigned blocks = static_cast<unsigned>((N + COLS - 1) / COLS);
        GemvOptions o = opts;
#ifdef RAD_GPU_PHASES
        // the norm-fused qkv (not gate/up) and the output projection (gemm_add with K <= 8,192)
        o.ph = NORM && !GLU       ? phase_slots(kPhaseGemvNorm, blocks, 3, s)
               : ADD && K <= 8192 ? phase_slots(kPhaseGemvAdd, blocks, 3, s)
                                  : nullptr;
#endif
        gpu_launch(k_gemv_block<W, M, R, GLU, NORM, ADD>, blocks, kBlockThreads, 0, s, x, px, w, bias, y, py, N, K, o);
        return RAD_OK;
    } else {
        if constexpr (NORM) return RAD_E_UNSUPPORTED;  // the warp kernel has no norm
        // Four weight rows per warp; for GLU two gate rows and their up rows.
        constexpr int R = 4;
        constexpr int COLS = GLU ? R / 2 : R;
        const int64_t warps = (N + COLS - 1) / COLS;
        gpu_launch(k_gemv<W, M, R, GLU, ADD>, static_cast<unsigned>((warps + 7) / 8), 256, 0, s, x, px, w, bias, y, py, N, K);
        return RAD_OK;
    }
}

// N: output columns (for GLU, the rows of each half of the stacked weight). With a fusion (NORM,
// ADD), RAD_E_UNSUPPORTED where no fused kernel serves these rows, for the caller to compose.
template <typename W, bool GLU = false, bool NORM = false, bool ADD = false>
int gemv(const RadArgs* a, const RadTensor* x, const RadTensor* w, const RadTensor* bias, RadTensor* y, int64_t M, int64_t N, int64_t K,
         const GemvOptions& opts = {}) {
    const auto* xp = static_cast<const float*>(x->data);
    const auto* wp = static_cast<const W*>(w->data);
    const W* bp = bias ? static_cast<const W*>(bias->data) : nullptr;
    auto* yp = static_cast<float*>(y->data);
    const int64_t px = pitch_elems(x), py = pitch_elems(y);
    gpuStream_t s = stream_of(a);
    constexpr int VN = Vec<W>::kN;
    const bool vec = K % VN == 0 && px % 4 == 0 && reinterpret_cast<uintptr_t>(xp) % 16 == 0 && reinterpret_cast<uintptr_t>(wp) % 16 == 0;
    if constexpr (NORM || ADD) {
        if (!vec || M > (NORM ? 2 : 8)) return RAD_E_UNSUPPORTED;
    }
    if constexpr (NORM) {  // the norm's weight is read 16 bytes at a time
        if (reinterpret_cast<uintptr_t>(opts.norm_w) % 16) return RAD_E_UNSUPPORTED;
    }
    if (!vec || M > 8) {
        if (GLU) return RAD_E_UNSUPPORTED;  // the caller composes gemm and swiglu
        gpu_launch(k_gemv_scalar<W>, static_cast<unsigned>((M * N + 7) / 8), 256, 0, s, xp, px, wp, bp, yp, py, M, N, K);
        return launched();
    }
    int rc = RAD_OK;
    switch (M) {  // NORM stopped above past two rows
    case 1: rc = launch_gemv<W, 1, GLU, NORM, ADD>(xp, px, wp, bp, yp, py, N, K, s, opts); break;
    case 2: rc = launch_gemv<W, 2, GLU, NORM, ADD>(xp, px, wp, bp, yp, py, N, K, s, opts); break;
    case 3: rc = launch_gemv<W, 3, GLU, NORM, ADD>(xp, px, wp, bp, yp, py, N, K, s, opts); break;
    case 4: rc = launch_gemv<W, 4, GLU, NORM, ADD>(xp, px, wp, bp, yp, py, N, K, s, opts); break;
    case 5: rc = launch_gemv<W, 5, GLU, NORM, ADD>(xp, px, wp, bp, yp, py, N, K, s, opts); break;
    case 6: rc = launch_gemv<W, 6, GLU, NORM, ADD>(xp, px, wp, bp, yp, py, N, K, s, opts); break;
    case 7: rc = launch_gemv<W, 7, GLU, NORM, ADD>(xp, px, wp, bp, yp, py, N, K, s, opts); break;
    default: rc = launch_gemv<W, 8, GLU, NORM, ADD>(xp, px, wp, bp, yp, py, N, K, s, opts); break;
    }
    return rc == RAD_OK ? launched() : rc;
}

}  // namespace

// gemm_swiglu: few rows through the fused weight-streaming kernel; otherwise the chain itself,
// gemm_blas into the scratch's head ([M, 2N]) and the swiglu kernel (rad_compose.h).
uint64_t gemm_swiglu_scratch(const RadArgs* geom) {
    return rad_compose_gemm_swiglu_scratch(geom) + gemm_blas_scratch(geom);  // gemm_blas's needs M and K only
}

int gemm_swiglu(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1);
    RadTensor* y = rad_arg_out(a, 2);
    if (!x || !w || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32) return RAD_E_DTYPE;
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N"), K = rad_args_geti(a, "K");
    if (M <= 8) {
        const int rc = with_float_type(w->dtype, [&](auto t) { return gemv<decltype(t), true>(a, x, w, nullptr, y, M, N, K); });
        if (rc != RAD_E_UNSUPPORTED) return rc;
    }
    return rad_compose_gemm_swiglu(a, gemm_blas, swiglu);  // the product first in scratch, gemm_blas's own after
}

// The decode-path fusions. gemm_add, the same bytes as its chain (rad-kbench checks it against
// gemm then add): in the gemv's epilogue up to 8 rows, through cuBLASLt's beta past that (no
// bias), else the chain itself (rad_compose.h). The norms: in the block gemv's one pass for one or
// two rows (the chain's value up to rounding, checked against libref), else the chain.
uint64_t gemm_add_scratch(const RadArgs* geom) { return rad_compose_gemm_add_scratch(geom) + gemm_blas_scratch(geom); }

// gemm's and gemm_add's operands (x, w, bias, y) through the weight-streaming kernels (ADD: y +=).
template <bool ADD>
int gemv_op(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *w = rad_arg_in(a, 1), *bias = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!x || !w || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32 || (bias && bias->dtype != w->dtype)) return RAD_E_DTYPE;
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N"), K = rad_args_geti(a, "K");
    const GemvOptions opts{nullptr, 0.0f, 0};
    return with_float_type(w->dtype, [&](auto t) { return gemv<decltype(t), false, false, ADD>(a, x, w, bias, y, M, N, K, opts); });
}

int gemm_add(const RadArgs* a) {
    const int64_t M = rad_args_geti(a, "M");
    const int rc = M <= 8 ? gemv_op<true>(a) : gemm_blas_add(a);
    if (rc != RAD_E_UNSUPPORTED) return rc;
    return rad_compose_gemm_add(a, M <= 8 ? gemm_rows : gemm_blas, add);
}

uint64_t rms_norm_gemm_scratch(const RadArgs* geom) { return rad_compose_rms_norm_gemm_scratch(geom) + gemm_blas_scratch(geom); }
uint64_t rms_norm_gemm_swiglu_scratch(const RadArgs* geom) { return rad_compose_rms_norm_gemm_scratch(geom) + gemm_swiglu_scratch(geom); }

// rms_norm_gemm (bias) and rms_norm_gemm_swiglu (GLU, no bias): x, the norm weight, w, [bias,] y.
template <bool GLU>
int rms_norm_then(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *nw = rad_arg_in(a, 1), *w = rad_arg_in(a, 2);
    const RadTensor* bias = GLU ? nullptr : rad_arg_in(a, 3);
    RadTensor* y = rad_arg_out(a, GLU ? 3 : 4);
    if (!x || !nw || !w || !y || x->dtype != RAD_F32 || y->dtype != RAD_F32 || (bias && bias->dtype != w->dtype)) return RAD_E_DTYPE;
    const int64_t M = rad_args_geti(a, "M"), N = rad_args_geti(a, "N"), K = rad_args_geti(a, "K");
    if (nw->dtype == w->dtype) {
        const GemvOptions opts{nw->data, static_cast<float>(rad_args_getf(a, "eps")),
                               static_cast<int>(rad_args_geti_or(a, "unit_offset", 0))};
        const int rc = with_float_type(w->dtype, [&](auto t) { return gemv<decltype(t), GLU, true>(a, x, w, bias, y, M, N, K, opts); });
        if (rc != RAD_E_UNSUPPORTED) return rc;
    }
    if constexpr (GLU)
        return rad_compose_rms_norm_gemm_swiglu(a, rms_norm, gemm_swiglu);
    else
        return rad_compose_rms_norm_gemm(a, rms_norm, M <= 8 ? gemm_rows : gemm_blas);
}
int rms_norm_gemm(const RadArgs* a) { return rms_norm_then<false>(a); }
int rms_norm_gemm_swiglu(const RadArgs* a) { return rms_norm_then<true>(a); }

int gemm_rows(const RadArgs* a) { return gemv_op<false>(a); }

}  // namespace gpu
