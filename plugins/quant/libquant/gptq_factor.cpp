// gptq_factor.cpp: U = J L^-1 J from one Cholesky factorisation of H with its order reversed (J
// reverses the order): H' = J H J = L L^T, and U = J L^-1 J is upper triangular with
// U^T U = J L^-T L^-1 J = J H'^-1 J = H^-1 (the factor with a positive diagonal is unique).
//
// At an 8B's scale (K = 14,336 for the down projection: L is 1.6 GB) a row-by-row factorisation
// streams L from memory for every row; here both steps go in blocks that stay in cache, on every
// thread:
//   - Cholesky right-looking in panels of kPanel columns: the panel's diagonal block, then its rows
//     below (each a task), then the trailing lower triangle less the panel's product, in tasks of
//     kRows rows that walk the panel's rows in tiles of kRows (a tile read from cache for all the
//     task's rows).
//   - L^-1 by forward substitution, kCols columns a task: each row of L read once for all of them,
//     each column's entries written straight into U's row.
// Every dot product is lanes of four doubles, summed (lane 0 + lane 1) + (lane 2 + lane 3), the
// tail after; this file builds without fused multiply-adds, so every clone below makes the same bits.
#include "gptq_factor.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "parallel.h"

namespace quant {
namespace {

constexpr int64_t kPanel = 64, kRows = 32, kCols = 16;

typedef double Lanes __attribute__((vector_size(32)));

__attribute__((target_clones("avx512f", "avx2", "default"))) double dot(const double* a, const double* b, int64_t n) {
    Lanes s = {0, 0, 0, 0};
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        Lanes x, y;
        std::memcpy(&x, a + k, sizeof x);
        std::memcpy(&y, b + k, sizeof y);
        s += x * y;
    }
    double t = (s[0] + s[1]) + (s[2] + s[3]);
    for (; k < n; ++k) t += a[k] * b[k];
    return t;
}

// dot() of a0 and of a1 with each of b0..b3 at once (out[2 r + c] for a_r, b_c): each b value
// loaded once for both rows, each a value once for the four; the same lanes and the same final sum
// as dot(), so the same bits.
__attribute__((target_clones("avx512f", "avx2", "default"))) void dots_2x4(const double* a0, const double* a1, const double* const* b,
                                                                           int64_t n, double* out) {
    Lanes s[2][4] = {};
    int64_t k = 0;
    for (; k + 4 <= n; k += 4) {
        Lanes x0, x1;
        std::memcpy(&x0, a0 + k, sizeof x0);
        std::memcpy(&x1, a1 + k, sizeof x1);
        for (int c = 0; c < 4; ++c) {
            Lanes y;
            std::memcpy(&y, b[c] + k, sizeof y);
            s[0][c] += x0 * y;
            s[1][c] += x1 * y;
        }
    }
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 4; ++c) {
            const double* a = r ? a1 : a0;
            double t = (s[r][c][0] + s[r][c][1]) + (s[r][c][2] + s[r][c][3]);
            for (int64_t m = k; m < n; ++m) t += a[m] * b[c][m];
            out[2 * c + r] = t;
        }
}

// Rows [i0, i1) of the panel [k0, k1) below its diagonal block: L[i][j] for j in the panel.
void panel_rows(double* a, int64_t K, int64_t k0, int64_t k1, int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
        double* ri = a + i * K;
        for (int64_t j = k0; j < k1; ++j) ri[j] = (ri[j] - dot(ri + k0, a + j * K + k0, j - k0)) / a[j * K + j];
    }
}

// In place: the lower factor of the K x K symmetric a (a = L L^T); false where a is not positive
// definite.
bool cholesky_lower(double* a, int64_t K) {
    for (int64_t k0 = 0; k0 < K; k0 += kPanel) {
        const int64_t k1 = std::min(K, k0 + kPanel);
        for (int64_t i = k0; i < k1; ++i) {  // the diagonal block
            double* ri = a + i * K;
            panel_rows(a, K, k0, i, i, i + 1);
            const double d = ri[i] - dot(ri + k0, ri + k0, i - k0);
            if (!(d > 0)) return false;
            ri[i] = std::sqrt(d);
        }
        const int64_t below = K - k1, tasks = (below + kRows - 1) / kRows;
        parallel_tasks(tasks, [&](int64_t t) { panel_rows(a, K, k0, k1, k1 + t * kRows, std::min(K, k1 + (t + 1) * kRows)); });
        // the trailing triangle: a[i][j] -= L[i][panel] . L[j][panel] for k1 <= j <= i
        parallel_tasks(tasks, [&](int64_t t) {
            const int64_t i0 = k1 + t * kRows, i1 = std::min(K, i0 + kRows), nb = k1 - k0;
            for (int64_t j0 = k1; j0 < i1; j0 += kRows)
                for (int64_t i = i0; i < i1; i += 2) {
                    // pairs of rows against quads of the tile's rows, while the quad is below both
                    // rows' diagonals; the rest one entry at a time
                    double* r0 = a + i * K;
                    double* r1 = i + 1 < i1 ? r0 + K : nullptr;
                    const int64_t j1 = std::min(j0 + kRows, i + 1);
                    int64_t j = j0;
                    if (r1)
                        for (; j + 4 <= j1; j += 4) {
                            const double* b[4] = {a + j * K + k0, a + (j + 1) * K + k0, a + (j + 2) * K + k0, a + (j + 3) * K + k0};
                            double d[8];
                            dots_2x4(r0 + k0, r1 + k0, b, nb, d);
                            for (int c = 0; c < 4; ++c) {
                                r0[j + c] -= d[2 * c];
                                r1[j + c] -= d[2 * c + 1];
                            }
                        }
                    for (int64_t jj = j; jj < j1; ++jj) r0[jj] -= dot(r0 + k0, a + jj * K + k0, nb);
                    if (r1)
                        for (int64_t jj = j; jj < std::min(j0 + kRows, i + 2); ++jj) r1[jj] -= dot(r1 + k0, a + jj * K + k0, nb);
                }
        });
    }
    return true;
}

}  // namespace

bool inverse_upper_factor(std::vector<double> h, int64_t K, std::vector<double>* u) {
    std::vector<double> l(static_cast<size_t>(K * K));
    parallel_tasks(K, [&](int64_t i) {
        for (int64_t j = 0; j <= i; ++j) l[i * K + j] = h[(K - 1 - i) * K + (K - 1 - j)];
    });
    h = {};
    if (!cholesky_lower(l.data(), K)) return false;
    // Column c of L^-1 (zero above c): x[c] = 1 / L[c][c], x[i] = -L[i][c:i] . x[c:i] / L[i][i].
    // U[i][j] = (L^-1)[K-1-i][K-1-j], so column c's entry at row i is U[K-1-i][K-1-c].
    u->assign(static_cast<size_t>(K * K), 0.0);
    parallel_tasks((K + kCols - 1) / kCols, [&](int64_t t) {
        const int64_t c0 = t * kCols, c1 = std::min(K, c0 + kCols);
        std::vector<double> x(static_cast<size_t>((c1 - c0) * K));
        for (int64_t i = c0; i < K; ++i) {
            const double* li = l.data() + i * K;
            double* urow = u->data() + (K - 1 - i) * K;
            for (int64_t c = c0; c < std::min(c1, i + 1); ++c) {
                double* xc = x.data() + (c - c0) * K;
                xc[i] = i == c ? 1.0 / li[i] : -dot(li + c, xc + c, i - c) / li[i];
                urow[K - 1 - c] = xc[i];
            }
        }
    });
    return true;
}

}  // namespace quant
