// gptq_sweep.cpp: the paper's lazy batches. Row by row, column by column, the update of column j
// is w[k] -= e_j U[j][k] for every k > j; each w[k] takes those updates in order of j. Here the
// columns go in blocks of B: inside a block each column's update reaches the block's later columns
// at once (they are quantised next), and the columns after the block take the block's updates
// together at its end, still in order of j, so every value sees the same operations in the same
// order and the bytes are those of the column-by-column sweep. That end-of-block update is where
// the time goes (n K^2 / 2 multiply-subtracts a weight); done for 4 rows at a time over tiles of
// kTile columns, U's block rows are read from cache, not from memory, for each row (U is 1.6 GB at
// K = 14,336). Rows are independent: tasks of kRowTask rows run on every thread.
//
// Blocks and groups: a group's scale comes from its values once every earlier column's update has
// reached them, so a group either starts a block or ends inside one: B = 128 where the group
// divides 128 or 128 divides it (every recipe's group, and one group a row), else B = the group.
#include "gptq_sweep.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include <radiance/rad_decode.h>

#include "parallel.h"

namespace quant {
namespace {

constexpr int64_t kBlock = 128, kTile = 256, kRowTask = 16;

int64_t column_block(int64_t group, int64_t K) {
    const int64_t b = (kBlock % group == 0 || group % kBlock == 0) ? kBlock : group;
    return std::min(b, K);
}

// w[r][k] -= e[r][b] * U[j0 + b][k] for 4 rows (or one), b in [0, nb), k in [k0, k1): in order of
// b, each U value loaded once for the rows.
__attribute__((target_clones("avx512f", "avx2", "default"))) void update_rows4(double* w0, double* w1, double* w2, double* w3,
                                                                               const double* e0, const double* e1, const double* e2,
                                                                               const double* e3, const double* u, int64_t K, int64_t j0,
                                                                               int64_t nb, int64_t k0, int64_t k1) {
    for (int64_t b = 0; b < nb; ++b) {
        const double* ub = u + (j0 + b) * K;
        const double f0 = e0[b], f1 = e1[b], f2 = e2[b], f3 = e3[b];
        for (int64_t k = k0; k < k1; ++k) {
            const double v = ub[k];
            w0[k] -= f0 * v;
            w1[k] -= f1 * v;
            w2[k] -= f2 * v;
            w3[k] -= f3 * v;
        }
    }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void update_row(double* w, const double* e, const double* u, int64_t K,
                                                                             int64_t j0, int64_t nb, int64_t k0, int64_t k1) {
    for (int64_t b = 0; b < nb; ++b) {
        const double* ub = u + (j0 + b) * K;
        const double f = e[b];
        for (int64_t k = k0; k < k1; ++k) w[k] -= f * ub[k];
    }
}

// Rows [r0, r1) of the block, every column.
void sweep_rows(const double* u, int64_t K, double* w, int64_t r0, int64_t r1, const SweepPlanes& o) {
    const int64_t B = column_block(o.group, K), n = r1 - r0;
    const int bits = rad_dtype_bits(o.code_dt);
    const CodeRange range = code_range(bits, o.zero != nullptr);
    std::vector<double> e(static_cast<size_t>(n * B));
    std::vector<AffineGroup> groups(static_cast<size_t>(n));
    std::vector<float> vals(static_cast<size_t>(o.group));
    for (int64_t r = r0; r < r1; ++r) {  // sub-byte rows: the padding bits are zero, not left over
        std::memset(o.codes + r * o.code_pitch, 0, o.code_pitch);
        if (o.zero) std::memset(o.zero + r * o.zero_pitch, 0, o.zero_pitch);
    }
    for (int64_t j0 = 0; j0 < K; j0 += B) {
        const int64_t j1 = std::min(K, j0 + B);
        for (int64_t r = r0; r < r1; ++r) {
            double* wr = w + r * K;
            double* er = e.data() + (r - r0) * B;
            AffineGroup& g = groups[static_cast<size_t>(r - r0)];
            for (int64_t j = j0; j < j1; ++j) {
                if (j % o.group == 0) {  // the group's scale from its values as the errors before have left them
                    for (int64_t k = 0; k < o.group; ++k) vals[k] = static_cast<float>(wr[j + k]);
                    g = affine_group(vals.data(), o.group, bits, o.sdt, o.zero != nullptr);
                    rad_store_f32(o.sdt, o.scale + r * o.scale_pitch, j / o.group, g.scale);
                    if (o.zero) rad_plane_store_bits(o.code_dt, o.zero + r * o.zero_pitch, j / o.group, static_cast<uint32_t>(g.zero));
                }
                const float q = affine_code(static_cast<float>(wr[j]), g, range);
                rad_plane_store_bits(o.code_dt, o.codes + r * o.code_pitch, j, static_cast<uint32_t>(static_cast<int32_t>(q)));
                const double* uj = u + j * K;
                const double ej = (wr[j] - static_cast<double>(affine_value(q, g))) / uj[j];
                er[j - j0] = ej;
                for (int64_t k = j + 1; k < j1; ++k) wr[k] -= ej * uj[k];
            }
        }
        for (int64_t k0 = j1; k0 < K; k0 += kTile) {
            const int64_t k1 = std::min(K, k0 + kTile);
            int64_t r = r0;
            for (; r + 4 <= r1; r += 4) {
                const double* er = e.data() + (r - r0) * B;
                double* wr = w + r * K;
                update_rows4(wr, wr + K, wr + 2 * K, wr + 3 * K, er, er + B, er + 2 * B, er + 3 * B, u, K, j0, j1 - j0, k0, k1);
            }
            for (; r < r1; ++r) update_row(w + r * K, e.data() + (r - r0) * B, u, K, j0, j1 - j0, k0, k1);
        }
    }
}

}  // namespace

void gptq_sweep(const double* u, int64_t K, double* w, int64_t n, const SweepPlanes& out) {
    parallel_tasks((n + kRowTask - 1) / kRowTask,
                   [&](int64_t t) { sweep_rows(u, K, w, t * kRowTask, std::min(n, (t + 1) * kRowTask), out); });
}

}  // namespace quant
