// gptq's blocked arithmetic (plugins/quant/libquant/gptq_factor.cpp, gptq_sweep.cpp) against the
// plain algorithms written here: the factor U of H^-1 satisfies U^T U H = I and is upper
// triangular, across the panel, tile and task edges of the blocked code; the sweep in lazy column
// batches on threads writes the bytes of the column-by-column, row-by-row sweep, for groups that
// divide the block, groups it divides, groups of other sizes and one group a row, with and
// without zero points.
//
// Mutations (made in the plugin's files, watched fail, undone): the trailing Cholesky update
// skipping the last panel row (j1 = min(j0 + kRows, i)) fails "the factor"; the end-of-block
// update of 4 rows leaving out its last row fails "the sweep"; a group's scale taken before the
// previous block's update reached it (the block 128 with groups of 96) fails "the sweep".
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <radiance/rad_decode.h>

#include "affine.h"
#include "gptq_factor.h"
#include "gptq_sweep.h"

namespace {

// A symmetric positive definite K x K matrix: A A^T / K + I / 10, A Gaussian.
std::vector<double> spd(int64_t K, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> g;
    std::vector<double> a(static_cast<size_t>(K * K)), h(static_cast<size_t>(K * K));
    for (double& v : a) v = g(rng);
    for (int64_t i = 0; i < K; ++i)
        for (int64_t j = 0; j < K; ++j) {
            double s = 0;
            for (int64_t k = 0; k < K; ++k) s += a[i * K + k] * a[j * K + k];
            h[i * K + j] = s / static_cast<double>(K) + (i == j ? 0.1 : 0.0);
        }
    return h;
}

// The sweep as gptq.cpp describes it: row by row, column by column, each column's update applied
// to every later column at once.
void plain_sweep(const std::vector<double>& u, int64_t K, std::vector<double> w, int64_t n, const quant::SweepPlanes& o) {
    const int bits = rad_dtype_bits(o.code_dt);
    const quant::CodeRange range = quant::code_range(bits, o.zero != nullptr);
    std::vector<float> vals(static_cast<size_t>(o.group));
    for (int64_t r = 0; r < n; ++r) {
        double* wr = w.data() + r * K;
        std::memset(o.codes + r * o.code_pitch, 0, o.code_pitch);
        if (o.zero) std::memset(o.zero + r * o.zero_pitch, 0, o.zero_pitch);
        quant::AffineGroup g;
        for (int64_t j = 0; j < K; ++j) {
            if (j % o.group == 0) {
                for (int64_t k = 0; k < o.group; ++k) vals[k] = static_cast<float>(wr[j + k]);
                g = quant::affine_group(vals.data(), o.group, bits, o.sdt, o.zero != nullptr);
                rad_store_f32(o.sdt, o.scale + r * o.scale_pitch, j / o.group, g.scale);
                if (o.zero) rad_plane_store_bits(o.code_dt, o.zero + r * o.zero_pitch, j / o.group, static_cast<uint32_t>(g.zero));
            }
            const float q = quant::affine_code(static_cast<float>(wr[j]), g, range);
            rad_plane_store_bits(o.code_dt, o.codes + r * o.code_pitch, j, static_cast<uint32_t>(static_cast<int32_t>(q)));
            const double e = (wr[j] - static_cast<double>(quant::affine_value(q, g))) / u[j * K + j];
            for (int64_t k = j + 1; k < K; ++k) wr[k] -= e * u[j * K + k];
        }
    }
}

}  // namespace

TEST_CASE("gptq's blocked factor: U upper triangular with U^T U H = I", "[quant][gptq]") {
    for (int64_t K : {int64_t{1}, int64_t{63}, int64_t{200}, int64_t{301}}) {
        CAPTURE(K);
        const std::vector<double> h = spd(K, 3 + static_cast<uint32_t>(K));
        std::vector<double> u;
        REQUIRE(quant::inverse_upper_factor(h, K, &u));
        double worst = 0;
        for (int64_t i = 0; i < K; ++i)
            for (int64_t j = 0; j < i; ++j) CHECK(u[i * K + j] == 0.0);
        // (U^T U H)[i][j] = sum_k (U^T U)[i][k] H[k][j]
        std::vector<double> utu(static_cast<size_t>(K * K), 0.0);
        for (int64_t i = 0; i < K; ++i)
            for (int64_t j = 0; j < K; ++j) {
                double s = 0;
                for (int64_t k = 0; k <= std::min(i, j); ++k) s += u[k * K + i] * u[k * K + j];
                utu[i * K + j] = s;
            }
        for (int64_t i = 0; i < K; ++i)
            for (int64_t j = 0; j < K; ++j) {
                double s = 0;
                for (int64_t k = 0; k < K; ++k) s += utu[i * K + k] * h[k * K + j];
                worst = std::max(worst, std::fabs(s - (i == j ? 1.0 : 0.0)));
            }
        INFO("largest |U^T U H - I| " << worst);
        CHECK(worst < 1e-9);
    }
    std::vector<double> u, bad = spd(70, 1);
    bad[5 * 70 + 5] = -1.0;  // not positive definite
    CHECK_FALSE(quant::inverse_upper_factor(bad, 70, &u));
}

TEST_CASE("gptq's sweep in blocks on threads writes the column-by-column bytes", "[quant][gptq]") {
    const int64_t K = 384, n = 37;  // 37 rows: tasks of 16 and a remainder, quads and single rows
    const std::vector<double> h = spd(K, 17);
    std::vector<double> u;
    REQUIRE(quant::inverse_upper_factor(h, K, &u));
    std::mt19937 rng(5);
    std::normal_distribution<double> g(0.0, 0.05);
    std::vector<double> w(static_cast<size_t>(n * K));
    for (double& v : w) v = g(rng);
    for (int64_t group : {int64_t{8}, int64_t{32}, int64_t{96}, int64_t{128}, int64_t{384}})
        for (int zero : {0, 1}) {
            CAPTURE(group, zero);
            const int code_dt = zero ? RAD_U4 : RAD_I4;
            const uint64_t cp = rad_row_bytes(code_dt, K), sp = static_cast<uint64_t>(K / group) * 2, zp = rad_row_bytes(code_dt, K / group);
            std::vector<uint8_t> c1(n * cp), s1(n * sp), z1(n * zp), c2(n * cp), s2(n * sp), z2(n * zp);
            const quant::SweepPlanes a{c1.data(), cp, s1.data(), sp, zero ? z1.data() : nullptr, zp, code_dt, RAD_F16, group};
            const quant::SweepPlanes b{c2.data(), cp, s2.data(), sp, zero ? z2.data() : nullptr, zp, code_dt, RAD_F16, group};
            plain_sweep(u, K, w, n, a);
            std::vector<double> wb = w;
            quant::gptq_sweep(u.data(), K, wb.data(), n, b);
            CHECK(c1 == c2);
            CHECK(s1 == s2);
            CHECK(z1 == z2);
        }
}
