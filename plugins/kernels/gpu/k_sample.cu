// k_sample.cu: picking tokens where the logits are, so only a token id per row crosses to the host.
//
// argmax: the lowest index of the largest value; a block per row, or for few rows several blocks a
// row and a warp per row picking among their bests.
// sample: one block per row, the host sampler's rules (docs/OPS.md `sample`) without sorting
// anything. Each cut (top_k, top_p, min_p) keeps a prefix of the order "higher p first, then the
// lower id", so a cut is a threshold: a value v and, among the tokens equal to v, the highest id
// kept. The value comes from a radix select over p's bits (p >= 0, so its bits order like p), by
// count for top_k and by mass for top_p; the id from a ballot walk over the ties in id order. The
// draw sums p over the survivors per warp, and the one warp holding the target walks its span in
// id order. Warp w owns a contiguous span of ids, read with coalesced lane strides (Span).
//
// The pre-filter (rad-kbench's sample rows match libref with it on an H200; top_k 40 / top_p 0.95
// drawing at batch 1 on the 8B shape 181.5 -> 231 tok/s against the one-block way): rows with
// 0 < top_k <= 64 take a pre-filter over many blocks instead. The global top_k under
// the order (p desc, id asc) is a subset of the union of every part's own top_k under that order,
// so blocks of 4,096 ids each sort their (p, id) keys and keep their first top_k, and one block
// a row sorts those candidates and applies the cuts and the draw to at most 64 tokens. Rows with
// top_p and no top_k keep 64 a part, and the parts' masses sum to the row's: where the row's 64
// largest reach top_p of it, the cut lies among them. Other rows (a top_k above 64, min_p or no
// cut alone, or a top_p whose prefix is longer than 64) go the one-block way in the last launch.
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
__global__ void k_argmax(const float* x, int64_t px, int64_t vocab, int parts, float* pv, int* pi, int32_t* y) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float sv[32];
    __shared__ int si[32];
    const int64_t row = blockIdx.x, per = (vocab + parts - 1) / parts;
    const int64_t begin = blockIdx.y * per, end = min(vocab, begin + per);
    const float* xr = x + row * px;
    float v = -INFINITY;
    int idx = INT_MAX;
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) better(v, idx, sane(xr[j]), static_cast<int>(j));
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

constexpr int kSampleThreads = 512;
constexpr int kSampleWarps = kSampleThreads / kWarpSize;

// One row's adjusted logits and probabilities, recomputed on every pass (no vocabulary-sized
// scratch, the same bits every time; the recomputation is most of the kernel's 1.2 ms a row).
struct Row {
    const float* __restrict__ x;
    float temperature;
    bool scale;
    float mx;
    __device__ float logit(int64_t j) const { return sane(scale ? x[j] / temperature : x[j]); }
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

__device__ Span span_of(int64_t vocab) {
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
    double dv[kSampleWarps];         // one slot per warp
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

__device__ int block_max(int v, int* slots) {
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
__device__ int nth_set_bit(uint32_t m, int n) {
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
__device__ void sample_row(const float* x, int64_t px, const float* cfg, int64_t pcfg, const double* u, int32_t* y, int64_t vocab,
                           Shared& sh) {
    const float* c = cfg + blockIdx.x * pcfg;
    const float temperature = c[0], top_p = c[1], min_p = c[2];
    const int64_t top_k = static_cast<int64_t>(c[3]);
    const bool greedy = !(temperature > 0.0f);
    Row r{x + blockIdx.x * px, temperature, !greedy && temperature != 1.0f, 0.0f};
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
            vk = __uint_as_float(radix_select<false>(r, s, [](int64_t, float p) { return p > 0; }, static_cast<double>(top_k), sh));
            const int ties_needed = static_cast<int>(top_k - static_cast<int64_t>(sh.above));
            idk = kth_id(r, s, [vk](int64_t, float p) { return p == vk; }, ties_needed, sh);
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
            if (p > vp) above += p;
            else if (p == vp) ++ties;
        });
        above = block_sum(above, sh.dv);
        ties = block_sum(ties, sh.iv);
        // Equal values add up one vp at a time: the number of ties the target needs.
        const double need = ceil((target - above) / static_cast<double>(vp));
        const int take = static_cast<int>(fmin(fmax(need, 1.0), static_cast<double>(max(ties, 1))));
        idp = kth_id(r, s, [&in_k, vp](int64_t j, float p) { return p == vp && in_k(j, p); }, take, sh);
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

__global__ void __launch_bounds__(kSampleThreads) k_sample(const float* x, int64_t px, const float* cfg, int64_t pcfg,
                                                           const double* u, int32_t* y, int64_t vocab) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ Shared sh;
    sample_row(x, px, cfg, pcfg, u, y, vocab, sh);
}

// ---- the pre-filter ----
constexpr int kPreSpan = 4096;     // ids a part: its keys sort in 32 KiB of shared memory
constexpr int kPreMaxK = 64;       // the largest top_k it serves
constexpr int kPreMaxParts = 64;   // parts x top_k candidates sort in 32 KiB too (vocabularies up to 256k)

int pre_parts(int64_t vocab) { return static_cast<int>((vocab + kPreSpan - 1) / kPreSpan); }
uint64_t pre_scratch_bytes(int64_t n) {
    return static_cast<uint64_t>(n > 0 ? n : 1) * kPreMaxParts *
           (kPreMaxK * sizeof(unsigned long long) + sizeof(double) + sizeof(float) + sizeof(int));
}

// The keys a part keeps for a row: its top_k (drawn rows with 0 < top_k <= kPreMaxK), kPreMaxK
// for a drawn row cut by top_p alone (top_k off: <= 0 or the whole vocabulary), else 0 (the row
// goes the one-block way).
__device__ int pre_keys(const float* c, int64_t vocab) {
    if (!(c[0] > 0.0f)) return 0;
    const int64_t top_k = static_cast<int64_t>(c[3]);
    if (top_k_asked(top_k, vocab)) return top_k <= kPreMaxK ? static_cast<int>(top_k) : 0;
    return c[1] < 1.0f ? kPreMaxK : 0;
}

// (p, id) as one key whose descending order is "higher p first, then the lower id" (p >= 0, so its
// bits order like p); 0 for p == 0, which no cut keeps ahead of a positive p.
__device__ __forceinline__ unsigned long long pre_key(float p, int64_t j) {
    return p > 0 ? (static_cast<unsigned long long>(__float_as_uint(p)) << 32) | (0xffffffffull - static_cast<uint32_t>(j)) : 0ull;
}
__device__ __forceinline__ float key_p(unsigned long long k) { return __uint_as_float(static_cast<uint32_t>(k >> 32)); }

// keys[0, n2) into descending order (n2 a power of two), the whole block taking part.
__device__ void sort_desc(unsigned long long* keys, int n2) {
    for (int size = 2; size <= n2; size <<= 1)
        for (int stride = size / 2; stride > 0; stride >>= 1) {
            for (int t = threadIdx.x; t < n2 / 2; t += blockDim.x) {
                const int i = 2 * stride * (t / stride) + t % stride, j = i + stride;
                const bool desc = (i & size) == 0;  // the last merge (size == n2) is descending throughout
                const unsigned long long a = keys[i], b = keys[j];
                if ((a < b) == desc) {
                    keys[i] = b;
                    keys[j] = a;
                }
            }
            __syncthreads();
        }
}

// Block (row, part): the largest adjusted logit (x / temperature, then sane) of the part's ids,
// for the row's max. Not k_argmax's parts: those rank sane(x), whose best need not give the
// largest x / temperature where infinities and the largest floats meet.
__global__ void __launch_bounds__(kSampleThreads) k_sample_pre_max(const float* x, int64_t px, const float* cfg, int64_t pcfg,
                                                                   int64_t vocab, int parts, float* pmax) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ float sv[32];
    __shared__ int si[32];
    const float* c = cfg + blockIdx.x * pcfg;
    if (pre_keys(c, vocab) == 0) return;
    const Row r{x + blockIdx.x * px, c[0], c[0] != 1.0f, 0.0f};
    const int64_t begin = static_cast<int64_t>(blockIdx.y) * kPreSpan, end = min(vocab, begin + kPreSpan);
    float v = -INFINITY;
    int idx = INT_MAX;
    for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) better(v, idx, r.logit(j), static_cast<int>(j));
    block_best(v, idx, sv, si);
    if (threadIdx.x == 0) pmax[blockIdx.x * parts + blockIdx.y] = v;
}

// The row's max over its parts (every thread reads them all: at most 64, from L2).
__device__ float pre_row_max(const float* pmax, int parts) {
    float m = -INFINITY;
    for (int q = 0; q < parts; ++q) m = fmaxf(m, pmax[blockIdx.x * parts + q]);
    return m;
}

// Block (row, part): the part's first keys (pre_keys of them), its count of ids with p > 0 and its mass.
__global__ void __launch_bounds__(kSampleThreads) k_sample_pre_part(const float* x, int64_t px, const float* cfg, int64_t pcfg,
                                                                    int64_t vocab, int parts, const float* pmax,
                                                                    unsigned long long* cand, int* posc, double* pmass) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ unsigned long long keys[kPreSpan];
    __shared__ int slots[kSampleWarps];
    __shared__ double dslots[kSampleWarps];
    const float* c = cfg + blockIdx.x * pcfg;
    const int keep = pre_keys(c, vocab);
    if (keep == 0) return;
    const float mx = pre_row_max(pmax, parts);
    if (mx == -INFINITY) return;  // the final kernel takes argmax's token
    const Row r{x + blockIdx.x * px, c[0], c[0] != 1.0f, mx};
    const int64_t begin = static_cast<int64_t>(blockIdx.y) * kPreSpan, end = min(vocab, begin + kPreSpan);
    int pos = 0;
    double mass = 0;
    for (int t = threadIdx.x; t < kPreSpan; t += blockDim.x) {
        const int64_t j = begin + t;
        const float p = j < end ? r.prob(j) : 0.0f;
        pos += p > 0 ? 1 : 0;
        mass += p;
        keys[t] = j < end ? pre_key(p, j) : 0ull;
    }
    pos = block_sum(pos, slots);  // its barriers also publish keys
    mass = block_sum(mass, dslots);
    sort_desc(keys, kPreSpan);
    const int64_t slot = static_cast<int64_t>(blockIdx.x) * parts + blockIdx.y;
    for (int t = threadIdx.x; t < keep; t += blockDim.x) cand[slot * kPreMaxK + t] = keys[t];
    if (threadIdx.x == 0) {
        posc[slot] = pos;
        pmass[slot] = mass;
    }
}

// One block a row: the pre-filter's cuts and draw where it served the row and its cut lies among
// the candidates (top_k below the row's count of p > 0; top_p reached within the 64 largest),
// else the one-block way.
__global__ void __launch_bounds__(kSampleThreads) k_sample_pre_final(const float* x, int64_t px, const float* cfg, int64_t pcfg,
                                                                     const double* u, int32_t* y, int64_t vocab, int parts,
                                                                     const float* pmax, const unsigned long long* cand,
                                                                     const int* posc, const double* pmass) {
    gpu_grid_wait();
    gpu_grid_release();
    __shared__ union {
        Shared sh;
        unsigned long long keys[kPreMaxParts * kPreMaxK];
    } smem;
    __shared__ unsigned long long top[kPreMaxK];
    __shared__ int n_keep;
    const float* c = cfg + blockIdx.x * pcfg;
    const int top_k = pre_keys(c, vocab);  // the candidates a part kept
    const bool by_k = top_k_asked(static_cast<int64_t>(c[3]), vocab);  // else top_p alone, kPreMaxK a part
    bool fast = top_k > 0;  // block-uniform from here on: every thread reads the same values
    if (fast) fast = pre_row_max(pmax, parts) > -INFINITY;
    if (fast && by_k) {
        int64_t positive = 0;
        for (int q = 0; q < parts; ++q) positive += posc[blockIdx.x * parts + q];
        fast = top_k < positive;
    }
    if (!fast) {
        sample_row(x, px, cfg, pcfg, u, y, vocab, smem.sh);
        return;
    }
    // Every part's first keys, sorted: the row's top_k (or its 64 largest) are the first top_k.
    const int n_c = parts * top_k;
    int n2 = 1;
    while (n2 < n_c) n2 <<= 1;
    for (int t = threadIdx.x; t < n2; t += blockDim.x)
        smem.keys[t] = t < n_c ? cand[(static_cast<int64_t>(blockIdx.x) * parts + t / top_k) * kPreMaxK + t % top_k] : 0ull;
    __syncthreads();
    sort_desc(smem.keys, n2);
    if (threadIdx.x == 0) {
        // top_p: the shortest prefix of what top_k left whose mass reaches top_p times that mass
        // (top_k's survivors, or the whole row's mass from the parts'); without top_k, a target
        // the 64 largest do not reach sends the row the one-block way (keep -1).
        const float top_p = c[1], min_p = c[2];
        double mass = 0;
        if (by_k)
            for (int i = 0; i < top_k; ++i) mass += key_p(smem.keys[i]);
        else
            for (int q = 0; q < parts; ++q) mass += pmass[blockIdx.x * parts + q];
        int keep = by_k ? top_k : -1;
        if (top_p < 1.0f) {
            const double target = static_cast<double>(fmaxf(0.0f, top_p)) * mass;
            double cum = 0;
            for (int i = 0; i < top_k && smem.keys[i] != 0ull; ++i) {
                cum += key_p(smem.keys[i]);
                if (cum >= target) {
                    keep = i + 1;
                    break;
                }
            }
        }
        // min_p: p >= min_p (the largest p is 1), again a prefix of the order
        if (min_p > 0.0f && keep > 0) {
            const float floor_p = fminf(min_p, 1.0f);
            int m = 0;
            while (m < keep && key_p(smem.keys[m]) >= floor_p) ++m;
            keep = m > 0 ? m : 1;
        }
        n_keep = keep;
        // the survivors again, keyed so that descending order is ascending id
        for (int i = 0; i < kPreMaxK && keep > 0; ++i) {
            const unsigned long long k = smem.keys[i];
            top[i] = i < keep ? ((k & 0xffffffffull) << 32) | (k >> 32) : 0ull;
        }
    }
    __syncthreads();
    if (n_keep < 0) {  // block-uniform
        sample_row(x, px, cfg, pcfg, u, y, vocab, smem.sh);
        return;
    }
    sort_desc(top, kPreMaxK);
    if (threadIdx.x == 0) {
        // The draw: the first survivor in id order whose running sum exceeds u * total.
        const int keep = n_keep;
        double total = 0;
        for (int i = 0; i < keep; ++i) total += __uint_as_float(static_cast<uint32_t>(top[i]));
        const double target = u[blockIdx.x] * total;
        double run = 0;
        int pick = -1;
        for (int i = 0; i < keep && pick < 0; ++i) {
            run += __uint_as_float(static_cast<uint32_t>(top[i]));
            if (run > target) pick = i;
        }
        // rounding leaves the target at the very top: the last survivor
        y[blockIdx.x] = static_cast<int32_t>(0xffffffffull - (top[pick < 0 ? keep - 1 : pick] >> 32));
    }
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
    const int parts = a->scratch_bytes >= argmax_scratch_bytes(n) ? argmax_parts(n, vocab) : 1;
    if (parts == 1) {  // a block of 1024 per row
        gpu_launch(k_argmax, dim3(static_cast<unsigned>(n), 1), 1024, 0, stream_of(a), xp, pitch_elems(x), vocab, 1,
                   static_cast<float*>(nullptr), static_cast<int*>(nullptr), yp);
        return launched();
    }
    auto* pv = static_cast<float*>(a->scratch);
    auto* pi = reinterpret_cast<int*>(pv + n * kArgmaxMaxParts);
    gpu_launch(k_argmax, dim3(static_cast<unsigned>(n), static_cast<unsigned>(parts)), 256, 0, stream_of(a), xp, pitch_elems(x), vocab,
               parts, pv, pi, yp);
    gpu_launch(k_argmax_final, static_cast<unsigned>(n), kWarpSize, 0, stream_of(a), static_cast<const float*>(pv),
               static_cast<const int*>(pi), yp, parts);
    return launched();
}

uint64_t argmax_scratch(const RadArgs* geom) { return argmax_scratch_bytes(rad_args_geti(geom, "n")); }

// The pre-filter's candidates (the engine's one scratch area is sized for the largest hook).
uint64_t sample_scratch(const RadArgs* geom) { return pre_scratch_bytes(rad_args_geti(geom, "n")); }

int sample(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *cfg = rad_arg_in(a, 1), *u = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!x || !cfg || !u || !y || x->dtype != RAD_F32 || cfg->dtype != RAD_F32 || u->dtype != RAD_F64 || y->dtype != RAD_I32)
        return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), vocab = rad_args_geti(a, "vocab");
    if (vocab <= 0 || vocab > INT_MAX) return RAD_E_ARG;
    if (n <= 0) return RAD_OK;
    const int parts = pre_parts(vocab);
    if (parts <= kPreMaxParts && a->scratch && a->scratch_bytes >= pre_scratch_bytes(n)) {
        auto* cand = static_cast<unsigned long long*>(a->scratch);
        auto* pmass = reinterpret_cast<double*>(cand + n * kPreMaxParts * kPreMaxK);
        auto* pmax = reinterpret_cast<float*>(pmass + n * kPreMaxParts);
        int* posc = reinterpret_cast<int*>(pmax + n * kPreMaxParts);
        const auto* xp = static_cast<const float*>(x->data);
        const auto* cp = static_cast<const float*>(cfg->data);
        const int64_t pxe = pitch_elems(x), pce = pitch_elems(cfg);
        const dim3 grid(static_cast<unsigned>(n), static_cast<unsigned>(parts));
        gpu_launch(k_sample_pre_max, grid, kSampleThreads, 0, stream_of(a), xp, pxe, cp, pce, vocab, parts, pmax);
        gpu_launch(k_sample_pre_part, grid, kSampleThreads, 0, stream_of(a), xp, pxe, cp, pce, vocab, parts,
                   static_cast<const float*>(pmax), cand, posc, pmass);
        gpu_launch(k_sample_pre_final, static_cast<unsigned>(n), kSampleThreads, 0, stream_of(a), xp, pxe, cp, pce,
                   static_cast<const double*>(u->data), static_cast<int32_t*>(y->data), vocab, parts,
                   static_cast<const float*>(pmax), static_cast<const unsigned long long*>(cand), static_cast<const int*>(posc),
                   static_cast<const double*>(pmass));
        return launched();
    }
    gpu_launch(k_sample, static_cast<unsigned>(n), kSampleThreads, 0, stream_of(a), static_cast<const float*>(x->data),
               pitch_elems(x), static_cast<const float*>(cfg->data), pitch_elems(cfg), static_cast<const double*>(u->data),
               static_cast<int32_t*>(y->data), vocab);
    return launched();
}

}  // namespace gpu
