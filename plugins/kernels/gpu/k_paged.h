// k_paged.h: what the attention kernels share about the step's layout: the sequence a row
// belongs to and where a position lives in the paged cache.
#pragma once
#include "k_common.h"

namespace gpu {

// The sequence whose rows hold row i: the last s with cu[s] <= i.
__device__ __forceinline__ int seq_of_row(const int32_t* cu, int n_seq, int64_t i) {
    int lo = 0, hi = n_seq;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (cu[mid] <= i)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

// The cache row (block * block size + offset) of position j through a sequence's block table:
// shifts when the block size is a power of two (block_shift >= 0; an integer division per
// 16-byte load cost about as many instructions a tile as the tile's softmax), a division otherwise.
__device__ __forceinline__ int64_t paged_row(const int32_t* table, int j, int block, int block_shift) {
    const int blk = block_shift >= 0 ? j >> block_shift : j / block;
    const int off = block_shift >= 0 ? j & (block - 1) : j % block;
    return static_cast<int64_t>(table[blk]) * block + off;
}

// As paged_row for a block size that is a power of two (1 << block_shift): no division path in
// the code, which in a loop unrolled over a tile's loads was most of a kernel's instructions.
__device__ __forceinline__ int64_t paged_row_pow2(const int32_t* table, int j, int block_shift) {
    return (static_cast<int64_t>(table[j >> block_shift]) << block_shift) + (j & ((1 << block_shift) - 1));
}

// The visible positions of a row at position p: [first, p].
__device__ __forceinline__ int visible_first(const AttnGeom& g, int p) { return g.window > 0 ? max(0, p - g.window + 1) : 0; }

// The splits that take a share of a row at position p: all of them, or with live_keys only as many
// as hold at most live_keys keys each (at least one).
__device__ __forceinline__ int live_splits(const AttnGeom& g, int p) {
    if (g.live_keys <= 0) return g.splits;
    const int len = p + 1 - visible_first(g, p);
    const int s = (len + g.live_keys - 1) / g.live_keys;
    return s < 1 ? 1 : s > g.splits ? g.splits : s;
}

// Split z's keys [j0, j1) of a row at position p: the visible positions cut into live_splits equal
// chunks, the last ones empty when the row is short (and every split past the live ones).
__device__ __forceinline__ void split_range(const AttnGeom& g, int p, int z, int& j0, int& j1) {
    const int first = visible_first(g, p);
    const int len = p + 1 - first;
    const int live = live_splits(g, p);
    const int per = (len + live - 1) / live;
    j0 = first + z * per;
    j1 = min(p + 1, j0 + per);
}

// log2(block) when block is a power of two, else -1.
inline int block_shift_of(int block) { return block > 0 && (block & (block - 1)) == 0 ? __builtin_ctz(static_cast<unsigned>(block)) : -1; }

}  // namespace gpu
