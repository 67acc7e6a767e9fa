// k_sample_row.h: the one-block sampler: one block per row, the host sampler's rules
// (docs/OPS.md `sample`) without sorting anything. Each cut (top_k, top_p, min_p) keeps a prefix
// of the order "higher p first, then the lower id", so a cut is a threshold: a value v and, among
// the tokens equal to v, the highest id kept. The value comes from a radix select over p's bits
// (p >= 0, so its bits order like p), by count for top_k and by mass for top_p; the id from a
// ballot walk over the ties in id order. The draw sums p over the survivors per warp, and the one
// warp holding the target walks its span in id order. Warp w owns a contiguous span of ids, read
// with coalesced lane strides (Span). k_sample.cu launches it for rows the pre-filter
// (k_sample_prefilter.cu) does not serve, and the pre-filter's last kernel falls back to it.
#pragma once
#include "k_pick.h"

namespace gpu::block_sampler {

using pick::better;
using pick::block_best;
using pick::sane;

constexpr int kSampleThreads = 512;
constexpr int kSampleWarps = kSampleThreads / kWarpSize;

// One row's adjusted logits and probabilities, recomputed on every pass (no vocabulary-sized
// scratch, the same bits every time; the recomputation is most of the kernel's 1.2 ms a row).
struct Row {
    const float* __restrict__ x;
    float temperature;
    bool scale;
    float mx;
    const uint32_t* mask;  // structured output's row, or null: a clear bit makes the token -inf
    __device__ float logit(int64_t j) const { return pick::allowed(mask, j) ? sane(scale ? x[j] / temperature : x[j]) : -INFINITY; }
    __device__ float prob(int64_t j) const { return expf(logit(j) - mx); }
};

// The ids a warp owns: [begin, end), contiguous, the warps in id order. Lane l visits begin + l,
// begin + l + kWarpSize, ...: loads are coalesced, and a walk in id order is warp by warp, then
// step by step, then lane by lane.
struct Span {
    int64_t begin, end;
    int lane;
    // f(j) for every id this lane visits (passes whose order does not matter).
    template <typename F>
    __device__ __forceinline__ void each(F f) const {
#pragma unroll 4
        for (int64_t j = begin + lane; j < end; j += kWarpSize) f(j);
    }
};

__device__ inline Span span_of(int64_t vocab) {
    const int64_t per = (vocab + kSampleWarps * kWarpSize - 1) / (kSampleWarps * kWarpSize) * kWarpSize;
    const int warp = threadIdx.x / kWarpSize;
    const int64_t begin = min(vocab, warp * per);
    return {begin, min(vocab, begin + per), static_cast<int>(threadIdx.x % kWarpSize)};
}

// top_k cuts only as 0 < top_k < vocab (and, the callers check, below the count of p > 0).
__device__ __forceinline__ bool top_k_asked(int64_t top_k, int64_t vocab) { return top_k > 0 && top_k < vocab; }

// Shared state of one row's block.
struct Shared {
    unsigned long long hist[kSampleWarps][256];  // per-warp radix histograms, folded into hist[0]
    double dv[kSampleWarps];                     // one slot per warp
    int iv[kSampleWarps];
    float bv[32];
    int bi[32];
    double above;
    uint32_t bits;
    int id;
};

// A warp-uniform value per warp (lane 0's counts) -> the sum over the warps before this one, and
// over all of them in `total`. Deterministic: the same additions in the same order every time.
template <typename T>
__device__ T warps_before(T warp_value, T* slots, T& total) {
    const int warp = threadIdx.x / kWarpSize;
    if (threadIdx.x % kWarpSize == 0) slots[warp] = warp_value;
    __syncthreads();
    T before = 0, all = 0;
    for (int w = 0; w < kSampleWarps; ++w) {
        if (w == warp) before = all;
        all += slots[w];
    }
    total = all;
    __syncthreads();
    return before;
}

// Every lane's value summed over the block; every thread gets the same bits.
template <typename T>
__device__ T block_sum(T v, T* slots) {
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) v += gpu_shfl_xor(v, m);
    T total;
    warps_before(v, slots, total);
    return total;
}

__device__ inline int block_max(int v, int* slots) {
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) v = max(v, gpu_shfl_xor(v, m));
    const int warp = threadIdx.x / kWarpSize;
    if (threadIdx.x % kWarpSize == 0) slots[warp] = v;
    __syncthreads();
    v = slots[0];
    for (int w = 1; w < kSampleWarps; ++w) v = max(v, slots[w]);
    __syncthreads();
    return v;
}

// The position (0-based) of the n-th (1-based) set bit of m.
__device__ inline int nth_set_bit(uint32_t m, int n) {
    for (int b = 0; b < 32; ++b)
        if (((m >> b) & 1u) && --n == 0) return b;
    return 31;
}

// Among the ids where keep(j, p) holds, the value v (as p's bits) with W(p > v) < need <= W(p >= v),
// W counting tokens (by_mass false) or summing p. Falls back to the smallest value present when
// rounding leaves `need` above the whole set. sh.above gets W(p > v) as the histograms summed it.
// The histograms add integers (shared-memory f64 atomics are compare-and-swap loops, and every
// token lands in a few buckets on the first pass): counts, or p in fixed point with 40 fraction
// bits. A mass so rounded can pick a neighbouring bucket only where the target lies within
// ~1e-12 per token of a bucket's edge; the caller recomputes the mass above v exactly.
template <bool by_mass, typename Keep>
__device__ uint32_t radix_select(const Row& r, const Span& s, Keep keep, double need, Shared& sh) {
    uint32_t prefix = 0, mask = 0;
    if (threadIdx.x == 0) sh.above = 0;
    const int warp = threadIdx.x / kWarpSize;
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int i = threadIdx.x; i < kSampleWarps * 256; i += blockDim.x) (&sh.hist[0][0])[i] = 0;
        __syncthreads();
        s.each([&](int64_t j) {
            const float p = r.prob(j);
            const uint32_t b = __float_as_uint(p);
            if ((b & mask) != prefix || !keep(j, p)) return;
            atomicAdd(&sh.hist[warp][(b >> shift) & 255u], by_mass ? static_cast<unsigned long long>(ldexpf(p, 40) + 0.5f) : 1ull);
        });
        __syncthreads();
        for (int b = threadIdx.x; b < 256; b += blockDim.x) {
            unsigned long long t = sh.hist[0][b];
            for (int w = 1; w < kSampleWarps; ++w) t += sh.hist[w][b];
            sh.hist[0][b] = t;
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            double acc = sh.above;
            int chosen = -1, last = -1;
            for (int b = 255; b >= 0; --b) {
                const double c = by_mass ? ldexp(static_cast<double>(sh.hist[0][b]), -40) : static_cast<double>(sh.hist[0][b]);
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
                acc -= by_mass ? ldexp(static_cast<double>(sh.hist[0][last]), -40) : static_cast<double>(sh.hist[0][last]);
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

// The id of the k-th (1-based) token in id order for which is(j, p) holds (-1: fewer than k).
template <typename Is>
__device__ int kth_id(const Row& r, const Span& s, Is is, int k, Shared& sh) {
    int mine = 0;  // this warp's count (warp-uniform)
    for (int64_t base = s.begin; base < s.end; base += kWarpSize) {
        const int64_t j = base + s.lane;
        mine += __popc(gpu_ballot(j < s.end && is(j, r.prob(j))));
    }
    int total;
    const int before = warps_before(mine, sh.iv, total);
    if (threadIdx.x == 0) sh.id = -1;
    __syncthreads();
    if (before < k && k <= before + mine) {
        int seen = before;
        for (int64_t base = s.begin; base < s.end; base += kWarpSize) {
            const int64_t j = base + s.lane;
            const uint32_t m = gpu_ballot(j < s.end && is(j, r.prob(j)));
            if (seen + __popc(m) >= k) {
                if (s.lane == 0) sh.id = static_cast<int>(base + nth_set_bit(m, k - seen));
                break;
            }
            seen += __popc(m);
        }
    }
    __syncthreads();
    return sh.id;
}

// One row (the block's) the one-block way.
__device__ inline void sample_row(const float* x, int64_t px, const float* cfg, int64_t pcfg, const double* u, int32_t* y, int64_t vocab,
                                  const uint32_t* mask, int64_t pmask, Shared& sh) {
    const float* c = cfg + blockIdx.x * pcfg;
    const float temperature = c[0], top_p = c[1], min_p = c[2];
    const int64_t top_k = static_cast<int64_t>(c[3]);
    const bool greedy = !(temperature > 0.0f);
    Row r{x + blockIdx.x * px, temperature, !greedy && temperature != 1.0f, 0.0f, mask ? mask + blockIdx.x * pmask : nullptr};
    const Span s = span_of(vocab);

    float mx = -INFINITY;
    int top = INT_MAX;
    s.each([&](int64_t j) { better(mx, top, r.logit(j), static_cast<int>(j)); });
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
    const bool k_asked = top_k_asked(top_k, vocab);
    if (k_asked) {
        int pos = 0;
        s.each([&](int64_t j) { pos += r.prob(j) > 0 ? 1 : 0; });
        if (top_k < block_sum(pos, sh.iv)) {
            by_k = true;
            vk = __uint_as_float(radix_select<false>(
                r, s, [](int64_t, float p) { return p > 0; }, static_cast<double>(top_k), sh));
            const int ties_needed = static_cast<int>(top_k - static_cast<int64_t>(sh.above));
            idk = kth_id(
                r, s, [vk](int64_t, float p) { return p == vk; }, ties_needed, sh);
        }
    }
    auto in_k = [by_k, vk, idk](int64_t j, float p) { return by_k ? (p > vk || (p == vk && j <= idk)) : p > 0; };

    // top_p: the shortest prefix of what top_k left whose mass reaches top_p times that mass.
    bool by_p = false;
    float vp = 0;
    int idp = 0;
    if (top_p < 1.0f) {
        by_p = true;
        double mass = 0;
        s.each([&](int64_t j) {
            const float p = r.prob(j);
            if (in_k(j, p)) mass += p;
        });
        const double target = static_cast<double>(fmaxf(0.0f, top_p)) * block_sum(mass, sh.dv);
        vp = __uint_as_float(radix_select<true>(r, s, in_k, target, sh));
        double above = 0;  // again, in a fixed order: the histograms' sum depends on atomics' order
        int ties = 0;
        s.each([&](int64_t j) {
            const float p = r.prob(j);
            if (!in_k(j, p)) return;
            if (p > vp)
                above += p;
            else if (p == vp)
                ++ties;
        });
        above = block_sum(above, sh.dv);
        ties = block_sum(ties, sh.iv);
        // Equal values add up one vp at a time: the number of ties the target needs.
        const double need = ceil((target - above) / static_cast<double>(vp));
        const int take = static_cast<int>(fmin(fmax(need, 1.0), static_cast<double>(max(ties, 1))));
        idp = kth_id(
            r, s, [&in_k, vp](int64_t j, float p) { return p == vp && in_k(j, p); }, take, sh);
    }
    const bool by_min = min_p > 0.0f;
    const float floor_p = fminf(min_p, 1.0f);
    const bool cuts = k_asked || by_p || by_min;
    auto survives = [=](int64_t j, float p) {
        if (!cuts) return true;
        if (!in_k(j, p)) return false;
        if (by_min && !(p >= floor_p)) return false;
        return !by_p || p > vp || (p == vp && j <= idp);
    };

    // The draw: the first survivor in id order whose running sum exceeds u * total.
    double mine = 0;
    int last = -1;
    s.each([&](int64_t j) {
        const float p = r.prob(j);
        if (!survives(j, p)) return;
        mine += p;
        last = static_cast<int>(j);
    });
#pragma unroll
    for (int m = kWarpSize / 2; m > 0; m >>= 1) mine += gpu_shfl_xor(mine, m);
    mine = gpu_shfl(mine, 0);  // lane 0's bits, as warps_before takes them
    double total;
    const double before = warps_before(mine, sh.dv, total);
    const double target = u[blockIdx.x] * total;
    const int fallback = cuts ? block_max(last, sh.iv) : static_cast<int>(vocab - 1);
    if (threadIdx.x == 0) sh.id = INT_MAX;
    __syncthreads();
    if (mine > 0 && before <= target && target < before + mine) {  // warp-uniform
        double carry = before;
        int pick = -1;
        for (int64_t base = s.begin; base < s.end; base += kWarpSize) {
            const int64_t j = base + s.lane;
            float p = 0;
            if (j < s.end) {
                p = r.prob(j);
                if (!survives(j, p)) p = 0;
            }
            double inc = p;
#pragma unroll
            for (int d = 1; d < kWarpSize; d <<= 1) {
                const double o = gpu_shfl_up(inc, d);
                if (s.lane >= d) inc += o;
            }
            const uint32_t crossed = gpu_ballot(p > 0 && carry + inc > target);
            if (crossed) {
                pick = static_cast<int>(base + nth_set_bit(crossed, 1));
                break;
            }
            carry += gpu_shfl(inc, kWarpSize - 1);
        }
        // Rounding between this walk and the warps' sums: the warp's last survivor.
        if (pick < 0) {
            int l = last;
#pragma unroll
            for (int m = kWarpSize / 2; m > 0; m >>= 1) l = max(l, gpu_shfl_xor(l, m));
            pick = l;
        }
        if (s.lane == 0) atomicMin(&sh.id, pick);
    }
    __syncthreads();
    if (threadIdx.x == 0) y[blockIdx.x] = sh.id != INT_MAX ? sh.id : fallback;
}

}  // namespace gpu::block_sampler
