// k_sample.cu: picking tokens where the logits are, so only a token id per row crosses to the host.
//
// argmax: one block per row, the lowest index of the largest value.
// sample: one block per row, the host sampler's rules (docs/OPS.md `sample`) without sorting
// anything. Each cut (top_k, top_p, min_p) keeps a prefix of the order "higher p first, then the
// lower id", so a cut is a threshold: a value v and, among the tokens equal to v, the highest id
// kept. The value comes from a radix select over p's bits (p >= 0, so its bits order like p), by
// count for top_k and by mass for top_p; the id from a scan over the ties in id order. The draw is
// a block-wide prefix sum of p over the survivors in id order. Thread t owns the contiguous ids
// [t*C, (t+1)*C), so "in id order" is "in thread order, then in the thread's loop".
#include <cfloat>
#include <climits>
#include <cmath>

#include "k_common.h"

namespace gpu {
namespace {

// NaN loses to everything and +inf ties with the largest float, as the host sampler maps them.
__device__ __forceinline__ float sane(float v) { return v != v ? -INFINITY : (v == INFINITY ? FLT_MAX : v); }

// (value, index) pairs: larger value wins, equal values keep the lower index.
__device__ __forceinline__ void better(float& v, int& i, float v2, int i2) {
    if (v2 > v || (v2 == v && i2 < i)) {
        v = v2;
        i = i2;
    }
}

// The block's best (value, index) over every thread's pair; every thread gets it. `sv`/`si` hold
// one entry per warp.
__device__ void block_best(float& v, int& idx, float* sv, int* si) {
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) better(v, idx, gpu_shfl_xor(v, m), gpu_shfl_xor(idx, m));
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    if (lane == 0) {
        sv[warp] = v;
        si[warp] = idx;
    }
    __syncthreads();
    v = sv[0];
    idx = si[0];
    for (int w = 1; w < static_cast<int>(blockDim.x) / kWarpSize; ++w) better(v, idx, sv[w], si[w]);
    __syncthreads();  // sv/si may be reused at once
}

__global__ void k_argmax(const float* x, int64_t px, int32_t* y, int64_t vocab) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float sv[32];
    __shared__ int si[32];
    const float* row = x + blockIdx.x * px;
    float v = -INFINITY;
    int idx = INT_MAX;
    for (int64_t j = threadIdx.x; j < vocab; j += blockDim.x) better(v, idx, sane(row[j]), static_cast<int>(j));
    block_best(v, idx, sv, si);
    // Only -inf entries (every one ties at -inf, the lowest index wins): token 0, as the sampler.
    if (threadIdx.x == 0) y[blockIdx.x] = idx == INT_MAX ? 0 : idx;
}

constexpr int kSampleThreads = 512;
constexpr int kSampleWarps = kSampleThreads / kWarpSize;

// One row's adjusted logits and probabilities, recomputed on every pass (cheaper than a
// vocabulary-sized scratch per row, and the same bits every time).
struct Row {
    const float* x;
    float temperature;
    bool scale;
    float mx;
    __device__ float logit(int64_t j) const { return sane(scale ? x[j] / temperature : x[j]); }
    __device__ float prob(int64_t j) const { return expf(logit(j) - mx); }
};

// Shared state of one row's block.
struct Shared {
    double hist[kSampleWarps][256];  // per-warp radix histograms, folded into hist[0]
    double dv[kSampleWarps + 1];     // scan / reduction slots
    int iv[kSampleWarps + 1];
    float bv[32];
    int bi[32];
    double above;
    uint32_t bits;
    int id;
};

// Exclusive prefix sum over the block in thread order; `total` gets the sum. Deterministic: the
// same additions in the same order every time.
template <typename T>
__device__ T block_scan(T v, T* slots, T& total) {
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    T inc = v;
#pragma unroll
    for (int d = 1; d < kWarpSize; d <<= 1) {
        const T o = gpu_shfl_up(inc, d);
        if (lane >= d) inc += o;
    }
    T excl = gpu_shfl_up(inc, 1);
    if (lane == 0) excl = 0;
    if (lane == kWarpSize - 1) slots[warp] = inc;
    __syncthreads();
    if (threadIdx.x == 0) {
        T run = 0;
        for (int w = 0; w < kSampleWarps; ++w) {
            const T t = slots[w];
            slots[w] = run;
            run += t;
        }
        slots[kSampleWarps] = run;
    }
    __syncthreads();
    excl += slots[warp];
    total = slots[kSampleWarps];
    __syncthreads();
    return excl;
}

__device__ int block_max(int v, int* slots) {
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) v = max(v, gpu_shfl_xor(v, m));
    const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
    if (lane == 0) slots[warp] = v;
    __syncthreads();
    v = slots[0];
    for (int w = 1; w < kSampleWarps; ++w) v = max(v, slots[w]);
    __syncthreads();
    return v;
}

template <typename T>
__device__ T block_sum(T v, T* slots) {
    T total;
    block_scan(v, slots, total);
    return total;
}

// Among the ids of [lo, hi) where keep(j, p) holds, the value v (as p's bits) with
// W(p > v) < need <= W(p >= v), W counting tokens (by_mass false) or summing p. Falls back to the
// smallest value present when rounding leaves `need` above the whole set. sh.above gets W(p > v)
// as the histograms summed it.
template <bool by_mass, typename Keep>
__device__ uint32_t radix_select(const Row& r, int64_t lo, int64_t hi, Keep keep, double need, Shared& sh) {
    uint32_t prefix = 0, mask = 0;
    if (threadIdx.x == 0) sh.above = 0;
    const int warp = threadIdx.x / kWarpSize;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int i = threadIdx.x; i < kSampleWarps * 256; i += blockDim.x) (&sh.hist[0][0])[i] = 0;
        __syncthreads();
        for (int64_t j = lo; j < hi; ++j) {
            const float p = r.prob(j);
            const uint32_t b = __float_as_uint(p);
            if ((b & mask) != prefix || !keep(j, p)) continue;
            atomicAdd(&sh.hist[warp][(b >> shift) & 255u], by_mass ? static_cast<double>(p) : 1.0);
        }
        __syncthreads();
        for (int b = threadIdx.x; b < 256; b += blockDim.x) {
            double s = sh.hist[0][b];
            for (int w = 1; w < kSampleWarps; ++w) s += sh.hist[w][b];
            sh.hist[0][b] = s;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            double acc = sh.above;
            int chosen = -1, last = -1;
            for (int b = 255; b >= 0; --b) {
                const double c = sh.hist[0][b];
                if (c <= 0) continue;
                last = b;
                if (acc + c >= need) {
                    chosen = b;
                    break;
                }
                acc += c;
            }
            if (chosen < 0 && last >= 0) {  // rounding: the whole set, down to its smallest bucket
                chosen = last;
                acc -= sh.hist[0][last];
            }
            sh.above = acc;
            sh.bits = prefix | (static_cast<uint32_t>(chosen < 0 ? 0 : chosen) << shift);
        }
        __syncthreads();
        prefix = sh.bits;
        mask |= 255u << shift;
    }
    return prefix;
}

// The id of the k-th (1-based) token of [lo, hi) in id order for which is(j, p) holds.
template <typename Is>
__device__ int kth_id(const Row& r, int64_t lo, int64_t hi, Is is, int k, Shared& sh) {
    int mine = 0;
    for (int64_t j = lo; j < hi; ++j) mine += is(j, r.prob(j)) ? 1 : 0;
    int total;
    const int before = block_scan(mine, sh.iv, total);
    if (threadIdx.x == 0) sh.id = -1;
    __syncthreads();
    if (before < k && k <= before + mine) {
        int seen = before;
        for (int64_t j = lo; j < hi; ++j)
            if (is(j, r.prob(j)) && ++seen == k) {
                sh.id = static_cast<int>(j);
                break;
            }
    }
    __syncthreads();
    return sh.id;
}

__global__ void __launch_bounds__(kSampleThreads) k_sample(const float* x, int64_t px, const float* cfg, int64_t pcfg,
                                                           const double* u, int32_t* y, int64_t vocab) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ Shared sh;
    const float* c = cfg + blockIdx.x * pcfg;
    const float temperature = c[0], top_p = c[1], min_p = c[2];
    const int64_t top_k = static_cast<int64_t>(c[3]);
    const bool greedy = !(temperature > 0.0f);
    Row r{x + blockIdx.x * px, temperature, !greedy && temperature != 1.0f, 0.0f};
    const int64_t per = (vocab + kSampleThreads - 1) / kSampleThreads;
    const int64_t lo = min(vocab, threadIdx.x * per), hi = min(vocab, lo + per);

    float mx = -INFINITY;
    int top = INT_MAX;
    for (int64_t j = lo; j < hi; ++j) better(mx, top, r.logit(j), static_cast<int>(j));
    block_best(mx, top, sh.bv, sh.bi);
    if (top == INT_MAX) top = 0;
    if (greedy || mx == -INFINITY) {
        if (threadIdx.x == 0) y[blockIdx.x] = top;
        return;
    }
    r.mx = mx;

    // top_k: the k largest (p, -id) keys, as the threshold (vk, idk); it counts only below the
    // number of tokens with p > 0.
    bool by_k = false;
    float vk = 0;
    int idk = 0;
    if (top_k > 0 && top_k < vocab) {
        int pos = 0;
        for (int64_t j = lo; j < hi; ++j) pos += r.prob(j) > 0 ? 1 : 0;
        if (top_k < block_sum(pos, sh.iv)) {
            by_k = true;
            vk = __uint_as_float(radix_select<false>(r, lo, hi, [](int64_t, float p) { return p > 0; },
                                                     static_cast<double>(top_k), sh));
            const int ties_needed = static_cast<int>(top_k - static_cast<int64_t>(sh.above));
            idk = kth_id(r, lo, hi, [vk](int64_t, float p) { return p == vk; }, ties_needed, sh);
        }
    }
    auto in_k = [by_k, vk, idk](int64_t j, float p) {
        return by_k ? (p > vk || (p == vk && j <= idk)) : p > 0;
    };

    // top_p: the shortest prefix of what top_k left whose mass reaches top_p times that mass.
    bool by_p = false;
    float vp = 0;
    int idp = 0;
    if (top_p < 1.0f) {
        by_p = true;
        double mass = 0;
        for (int64_t j = lo; j < hi; ++j) {
            const float p = r.prob(j);
            if (in_k(j, p)) mass += p;
        }
        const double target = static_cast<double>(fmaxf(0.0f, top_p)) * block_sum(mass, sh.dv);
        vp = __uint_as_float(radix_select<true>(r, lo, hi, in_k, target, sh));
        double above = 0;  // again, in a fixed order: the histograms' sum depends on atomics' order
        int ties = 0;
        for (int64_t j = lo; j < hi; ++j) {
            const float p = r.prob(j);
            if (!in_k(j, p)) continue;
            if (p > vp) above += p;
            else if (p == vp) ++ties;
        }
        above = block_sum(above, sh.dv);
        ties = block_sum(ties, sh.iv);
        // Equal values add up one vp at a time: the number of ties the target needs.
        const double need = ceil((target - above) / static_cast<double>(vp));
        const int take = static_cast<int>(fmin(fmax(need, 1.0), static_cast<double>(max(ties, 1))));
        idp = kth_id(r, lo, hi, [&in_k, vp](int64_t j, float p) { return p == vp && in_k(j, p); }, take, sh);
    }
    const bool by_min = min_p > 0.0f;
    const float floor_p = fminf(min_p, 1.0f);
    const bool cuts = (top_k > 0 && top_k < vocab) || top_p < 1.0f || min_p > 0.0f;
    auto survives = [=](int64_t j, float p) {
        if (!cuts) return true;
        if (!in_k(j, p)) return false;
        if (by_min && !(p >= floor_p)) return false;
        return !by_p || p > vp || (p == vp && j <= idp);
    };

    // The draw: the first survivor in id order whose running sum exceeds u * total.
    double mine = 0;
    int last = -1;
    for (int64_t j = lo; j < hi; ++j) {
        const float p = r.prob(j);
        if (!survives(j, p)) continue;
        mine += p;
        last = static_cast<int>(j);
    }
    double total;
    const double before = block_scan(mine, sh.dv, total);
    const double target = u[blockIdx.x] * total;
    if (threadIdx.x == 0) sh.id = INT_MAX;
    __syncthreads();
    if (mine > 0 && before <= target && target < before + mine) {
        double cum = before;
        int pick = last;  // rounding between this walk and the scan: the chunk's last survivor
        for (int64_t j = lo; j < hi; ++j) {
            const float p = r.prob(j);
            if (!survives(j, p)) continue;
            cum += p;
            if (cum > target) {
                pick = static_cast<int>(j);
                break;
            }
        }
        atomicMin(&sh.id, pick);
    }
    // Nobody claimed it (the target at the very top): the last survivor, or vocab - 1 with no cut.
    const int fallback = cuts ? block_max(last, sh.iv) : static_cast<int>(vocab - 1);
    if (threadIdx.x == 0) y[blockIdx.x] = sh.id != INT_MAX ? sh.id : fallback;
}

}  // namespace

int argmax(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!x || !y || x->dtype != RAD_F32 || y->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), vocab = rad_args_geti(a, "vocab");
    if (n <= 0) return RAD_OK;
    gpu_launch(k_argmax, static_cast<unsigned>(n), 1024, 0, stream_of(a), static_cast<const float*>(x->data), pitch_elems(x),
               static_cast<int32_t*>(y->data), vocab);
    return launched();
}

int sample(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *cfg = rad_arg_in(a, 1), *u = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!x || !cfg || !u || !y || x->dtype != RAD_F32 || cfg->dtype != RAD_F32 || u->dtype != RAD_F64 || y->dtype != RAD_I32)
        return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), vocab = rad_args_geti(a, "vocab");
    if (vocab <= 0 || vocab > INT_MAX) return RAD_E_ARG;
    if (n <= 0) return RAD_OK;
    gpu_launch(k_sample, static_cast<unsigned>(n), kSampleThreads, 0, stream_of(a), static_cast<const float*>(x->data),
               pitch_elems(x), static_cast<const float*>(cfg->data), pitch_elems(cfg), static_cast<const double*>(u->data),
               static_cast<int32_t*>(y->data), vocab);
    return launched();
}

}  // namespace gpu
