// libref's gemm_q row (docs/OPS.md), the oracle every library's quantised gemm is checked against:
// by hand on a few values, and bit for bit libref's gemm over the weight decoded here by a loop of
// this file's own (not rad_decode.h), for each code dtype and grouping.
//
// Mutations each of these caught (made in plugins/kernels/ref/gemm_q.cpp, watched fail, undone):
// the zero point's plane given the codes' grouping [1x1] fails both the hand case and "the same
// bytes"; group_rows ignored (a scale row per weight row) fails "the same bytes" (the 4 x 8 fp8
// blocks); the bias left out fails the hand case; the min added instead of subtracted, or
// subtracted before the scale, fails "a min" (both its cases); the perm operand read but not
// given to the decoder fails "gemm_q with perm" (both its cases) and the repeated and out-of-range
// tables of "refuses a perm".
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "radiance/rad_plugin.h"

int ref_gemm(const RadArgs* a);
int ref_gemm_q(const RadArgs* a);

namespace {

RadTensor tensor(const void* data, int dtype, int64_t rows, int64_t cols) {
    RadTensor t{};
    t.data = const_cast<void*>(data);
    t.dtype = dtype;
    t.rank = 2;
    t.shape[0] = rows;
    t.shape[1] = cols;
    return t;
}

RadParam pint(const char* n, int64_t v) { return {n, RAD_P_INT, 0, v, 0, nullptr}; }
RadParam pstr(const char* n, const char* v) { return {n, RAD_P_STR, 0, 0, 0, v}; }

struct QWeight {
    int qtype = RAD_I8, sdtype = RAD_F16;
    int64_t group = 0, group_rows = 1;
    std::vector<uint8_t> codes, scale, zero;  // zero empty: absent
    std::vector<uint8_t> mins;                // of sdtype, the scale's shape; empty: absent (operand 6)
    const char* qtype_param = nullptr;        // a `qtype` other than the codes' dtype
    int64_t scale_cols = 0;                   // a scale plane's width other than the grouping's
    std::vector<int32_t> perm;                // act-order's table, [K]; empty: absent (operand 7)
    int perm_dtype = RAD_I32;                 // a table of another dtype
};

int gemm_q(const std::vector<float>& x, int64_t M, int64_t N, int64_t K, const QWeight& q, const float* bias, std::vector<float>& y) {
    const int64_t sr = (N + q.group_rows - 1) / q.group_rows, sc = q.scale_cols ? q.scale_cols : (K + q.group - 1) / q.group;
    std::vector<RadTensor> t = {tensor(x.data(), RAD_F32, M, K),
                                tensor(q.codes.data(), q.qtype, N, K),
                                tensor(q.scale.data(), q.sdtype, sr, sc),
                                tensor(q.zero.empty() ? nullptr : q.zero.data(), q.qtype, sr, sc),
                                tensor(bias, RAD_F32, 1, N),
                                tensor(y.data(), RAD_F32, M, N),
                                tensor(q.mins.empty() ? nullptr : q.mins.data(), q.sdtype, sr, sc),
                                tensor(q.perm.empty() ? nullptr : q.perm.data(), q.perm_dtype, 1, static_cast<int64_t>(q.perm.size()))};
    t[4].rank = 1;
    t[4].shape[0] = N;
    t[7].rank = 1;  // [K], as docs/OPS.md writes it (the engine's view of a t.perm table is [1, K])
    t[7].shape[0] = static_cast<int64_t>(q.perm.size());
    const RadParam p[] = {pint("M", M),
                          pint("N", N),
                          pint("K", K),
                          pstr("qtype", q.qtype_param ? q.qtype_param : rad_dtype_name(q.qtype)),
                          pint("group", q.group),
                          pint("group_rows", q.group_rows),
                          pstr("sdtype", rad_dtype_name(q.sdtype))};
    RadArgs a{};
    a.t = t.data();
    a.n_t = !q.perm.empty() ? 8 : q.mins.empty() ? 6 : 7;  // callers written before `min` pass six operands
    a.p = p;
    a.n_p = 7;
    return ref_gemm_q(&a);
}

void gemm(const std::vector<float>& x, int64_t M, int64_t N, int64_t K, const std::vector<float>& w, std::vector<float>& y) {
    std::vector<RadTensor> t = {tensor(x.data(), RAD_F32, M, K), tensor(w.data(), RAD_F32, N, K), tensor(nullptr, RAD_F32, 1, 1),
                                tensor(y.data(), RAD_F32, M, N)};
    const RadParam p[] = {pint("M", M), pint("N", N), pint("K", K), pstr("wdtype", "f32")};
    RadArgs a{};
    a.t = t.data();
    a.n_t = 4;
    a.p = p;
    a.n_p = 4;
    REQUIRE(ref_gemm(&a) == RAD_OK);
}

// This file's own reading of a code: i8, u8, i4, u4 (low nibble first), OCP e4m3.
float code_at(const QWeight& q, const std::vector<uint8_t>& plane, int64_t cols, int64_t i, int64_t j) {
    if (q.qtype == RAD_I4 || q.qtype == RAD_U4) {
        const int64_t pitch = (cols + 1) / 2;
        const int v = (plane[i * pitch + j / 2] >> (4 * (j % 2))) & 15;
        return static_cast<float>(q.qtype == RAD_I4 && v >= 8 ? v - 16 : v);
    }
    const uint8_t b = plane[i * cols + j];
    if (q.qtype == RAD_I8) return static_cast<float>(static_cast<int8_t>(b));
    if (q.qtype == RAD_U8) return static_cast<float>(b);
    const int e = (b >> 3) & 15, m = b & 7;  // e4m3
    const float v = e == 0 ? std::ldexp(static_cast<float>(m), -9) : std::ldexp(1.0f + m / 8.0f, e - 7);
    return (b & 0x80) ? -v : v;
}

float float_at(int dt, const std::vector<uint8_t>& plane, int64_t sc, int64_t i, int64_t j) {
    const size_t k = static_cast<size_t>(i * sc + j);
    uint16_t h;
    switch (dt) {
    case RAD_F32: {
        float f;
        std::memcpy(&f, &plane[4 * k], 4);
        return f;
    }
    case RAD_F16: std::memcpy(&h, &plane[2 * k], 2); return rad_f16_to_f32(h);
    default: std::memcpy(&h, &plane[2 * k], 2); return rad_bf16_to_f32(h);
    }
}

float scale_at(const QWeight& q, int64_t sc, int64_t i, int64_t j) { return float_at(q.sdtype, q.scale, sc, i, j); }

std::vector<float> decode_here(const QWeight& q, int64_t N, int64_t K) {
    const int64_t sc = (K + q.group - 1) / q.group;
    std::vector<float> w(static_cast<size_t>(N * K));
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) {
            float c = code_at(q, q.codes, K, n, k);
            if (!q.zero.empty()) c = c - code_at(q, q.zero, sc, n / q.group_rows, k / q.group);
            w[n * K + k] = c * scale_at(q, sc, n / q.group_rows, k / q.group);
            if (!q.mins.empty()) w[n * K + k] = w[n * K + k] - float_at(q.sdtype, q.mins, sc, n / q.group_rows, k / q.group);
        }
    if (q.perm.empty()) return w;
    std::vector<float> scattered(w.size());  // stored column k is the weight's column perm[k]
    for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) scattered[n * K + q.perm[k]] = w[n * K + k];
    return scattered;
}

std::vector<uint8_t> random_bytes(size_t n, std::mt19937& g) {
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(g());
    return v;
}

}  // namespace

TEST_CASE("gemm_q by hand: u4 codes, a zero point and a scale per 2 columns, a bias", "[gemm_q]") {
    QWeight q;
    q.qtype = RAD_U4;
    q.group = 2;
    q.codes = {0x30, 0xf9, 0x21, 0x43};  // row 0: 0 3 9 15, row 1: 1 2 3 4
    q.zero = {0x23, 0x10};               // row 0: 3 2, row 1: 0 1
    for (float s : {0.5f, 2.0f, 1.0f, 0.25f}) {
        const uint16_t h = rad_f32_to_f16(s);
        q.scale.push_back(static_cast<uint8_t>(h & 0xff));
        q.scale.push_back(static_cast<uint8_t>(h >> 8));
    }
    // w' = [-1.5 0 14 26 ; 1 2 0.5 0.75]
    const std::vector<float> x = {1, 2, 3, 4, -1, 0.5f, 2, 0};
    const float bias[] = {0.25f, -1};
    std::vector<float> y(4, NAN);
    REQUIRE(gemm_q(x, 2, 2, 4, q, bias, y) == RAD_OK);
    CHECK(y == std::vector<float>{144.75f, 8.5f, 29.75f, 0});
}

TEST_CASE("gemm_q is gemm over the decoded weight, to the bit, for every code dtype and grouping", "[gemm_q]") {
    std::mt19937 g(5);
    const int64_t M = 3, N = 10, K = 48;
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(M * K));
    for (auto& v : x) v = normal(g);
    struct Form {
        int qtype, sdtype;
        int64_t group, group_rows;
        bool zero;
    };
    for (const Form& f :
         {Form{RAD_I8, RAD_F16, 16, 1, false}, Form{RAD_U8, RAD_BF16, 48, 1, true}, Form{RAD_I4, RAD_F16, 16, 1, false},
          Form{RAD_U4, RAD_F32, 8, 1, true}, Form{RAD_FP8_E4M3, RAD_F32, 48, 1, false}, Form{RAD_FP8_E4M3, RAD_F32, 8, 4, false}}) {
        QWeight q;
        q.qtype = f.qtype;
        q.sdtype = f.sdtype;
        q.group = f.group;
        q.group_rows = f.group_rows;
        const int64_t sr = (N + f.group_rows - 1) / f.group_rows, sc = (K + f.group - 1) / f.group;
        q.codes = random_bytes(static_cast<size_t>(N * rad_row_bytes(f.qtype, K)), g);
        if (f.qtype == RAD_FP8_E4M3)
            for (auto& b : q.codes)
                if ((b & 0x7f) == 0x7f) b = 0x38;  // no NaN codes
        if (f.zero) q.zero = random_bytes(static_cast<size_t>(sr * rad_row_bytes(f.qtype, sc)), g);
        for (int64_t i = 0; i < sr * sc; ++i) {
            const float s = 0.01f * (1 + static_cast<float>(i % 7));
            const size_t at = q.scale.size();
            q.scale.resize(at + static_cast<size_t>(rad_dtype_bits(f.sdtype) / 8));
            rad_store_f32(f.sdtype, q.scale.data() + at, 0, s);
        }
        INFO("qtype " << rad_dtype_name(f.qtype) << " group " << f.group << " x " << f.group_rows);
        std::vector<float> yq(static_cast<size_t>(M * N), NAN), yd(yq.size(), NAN);
        REQUIRE(gemm_q(x, M, N, K, q, nullptr, yq) == RAD_OK);
        gemm(x, M, N, K, decode_here(q, N, K), yd);
        CHECK(std::memcmp(yq.data(), yd.data(), yq.size() * 4) == 0);
    }
}

TEST_CASE("gemm_q refuses operands that disagree with its parameters", "[gemm_q]") {
    QWeight q;
    q.group = 4;
    q.codes.assign(8, 1);
    q.scale.assign(8, 0);
    std::vector<float> x(4, 1.0f), y(2);
    CHECK(gemm_q(x, 1, 2, 4, q, nullptr, y) == RAD_OK);
    QWeight other = q;
    other.qtype_param = "u8";  // the codes are i8
    CHECK(gemm_q(x, 1, 2, 4, other, nullptr, y) == RAD_E_DTYPE);
    QWeight groups = q;
    groups.group = 2;  // two scales a row wanted, one given
    groups.scale_cols = 1;
    CHECK(gemm_q(x, 1, 2, 4, groups, nullptr, y) == RAD_E_SHAPE);
    QWeight zero = q;
    zero.qtype = RAD_U4;  // u4 codes with a u4 zero point: served
    zero.codes.assign(4, 1);
    zero.zero.assign(2, 0);
    zero.qtype_param = "u4";
    CHECK(gemm_q(x, 1, 2, 4, zero, nullptr, y) == RAD_OK);
}

// A GGUF Q4_K import's form: u4 codes, an f32 scale and min per group, no zero point:
// w' = c * s - m, the product rounded before the difference.
TEST_CASE("gemm_q with a min: w' = c * s - m, by hand and as gemm over the decoded weight", "[gemm_q]") {
    QWeight q;
    q.qtype = RAD_U4;
    q.sdtype = RAD_F32;
    q.group = 2;
    q.codes = {0x30, 0xf9, 0x21, 0x43};  // row 0: 0 3 9 15, row 1: 1 2 3 4
    auto f32s = [](std::initializer_list<float> v) {
        std::vector<uint8_t> b(v.size() * 4);
        std::memcpy(b.data(), std::data(v), b.size());
        return b;
    };
    q.scale = f32s({0.5f, 2.0f, 1.0f, 0.25f});
    q.mins = f32s({1.0f, -3.0f, 0.5f, 1.0f});
    // w' = [-1 0.5 21 33 ; 0.5 1.5 -0.25 0]
    const std::vector<float> x = {1, 2, 3, 4, -1, 0.5f, 2, 0};
    std::vector<float> y(4, NAN);
    REQUIRE(gemm_q(x, 2, 2, 4, q, nullptr, y) == RAD_OK);
    CHECK(y == std::vector<float>{195, 2.75f, 43.25f, -0.25f});

    std::mt19937 g(11);
    QWeight r;
    r.qtype = RAD_U4;
    r.sdtype = RAD_F32;
    r.group = 32;
    const int64_t M = 3, N = 5, K = 64;
    r.codes = random_bytes(static_cast<size_t>(N * K / 2), g);
    std::uniform_real_distribution<float> u(-0.1f, 0.1f);
    std::vector<float> s(static_cast<size_t>(N * 2)), m(s.size()), xr(static_cast<size_t>(M * K));
    for (auto& v : s) v = u(g);
    for (auto& v : m) v = u(g);
    for (auto& v : xr) v = u(g);
    r.scale.resize(s.size() * 4);
    std::memcpy(r.scale.data(), s.data(), r.scale.size());
    r.mins.resize(m.size() * 4);
    std::memcpy(r.mins.data(), m.data(), r.mins.size());
    std::vector<float> yq(static_cast<size_t>(M * N)), yd(yq.size());
    REQUIRE(gemm_q(xr, M, N, K, r, nullptr, yq) == RAD_OK);
    gemm(xr, M, N, K, decode_here(r, N, K), yd);
    CHECK(std::memcmp(yq.data(), yd.data(), yq.size() * 4) == 0);
}

// GPTQ act-order's form: u4 codes with a zero point per group of stored columns and a table
// (operand 7) saying which of the weight's columns each stored one is: w'[n][perm[j]] = v[n][j].
TEST_CASE("gemm_q with perm: x gathered by the table, by hand and as gemm over the scattered weight", "[gemm_q]") {
    QWeight q;
    q.qtype = RAD_U4;
    q.group = 2;
    q.codes = {0x30, 0xf9, 0x21, 0x43};  // row 0: 0 3 9 15, row 1: 1 2 3 4
    q.zero = {0x23, 0x10};               // row 0: 3 2, row 1: 0 1
    for (float s : {0.5f, 2.0f, 1.0f, 0.25f}) {
        const uint16_t h = rad_f32_to_f16(s);
        q.scale.push_back(static_cast<uint8_t>(h & 0xff));
        q.scale.push_back(static_cast<uint8_t>(h >> 8));
    }
    q.perm = {3, 1, 0, 2};
    // v = [-1.5 0 14 26 ; 1 2 0.5 0.75], w' = [14 0 26 -1.5 ; 0.5 2 0.75 1]
    const std::vector<float> x = {1, 2, 3, 4, -1, 0.5f, 2, 0};
    std::vector<float> y(4, NAN);
    REQUIRE(gemm_q(x, 2, 2, 4, q, nullptr, y) == RAD_OK);
    CHECK(y == std::vector<float>{86, 10.75f, 38, 2});

    std::mt19937 g(13);
    const int64_t M = 3, N = 10, K = 64;
    QWeight r;
    r.qtype = RAD_U4;
    r.sdtype = RAD_F16;
    r.group = 16;
    r.codes = random_bytes(static_cast<size_t>(N * K / 2), g);
    r.zero = random_bytes(static_cast<size_t>(N * 2), g);
    for (int64_t i = 0; i < N * 4; ++i) {
        const uint16_t h = rad_f32_to_f16(0.01f * (1 + static_cast<float>(i % 7)));
        r.scale.push_back(static_cast<uint8_t>(h & 0xff));
        r.scale.push_back(static_cast<uint8_t>(h >> 8));
    }
    r.perm.resize(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) r.perm[static_cast<size_t>(k)] = static_cast<int32_t>(k);
    std::shuffle(r.perm.begin(), r.perm.end(), g);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xr(static_cast<size_t>(M * K));
    for (auto& v : xr) v = normal(g);
    std::vector<float> yq(static_cast<size_t>(M * N), NAN), yd(yq.size(), NAN);
    REQUIRE(gemm_q(xr, M, N, K, r, nullptr, yq) == RAD_OK);
    gemm(xr, M, N, K, decode_here(r, N, K), yd);
    CHECK(std::memcmp(yq.data(), yd.data(), yq.size() * 4) == 0);  // the weight's own column order: gemm's bits
}

TEST_CASE("gemm_q refuses a perm that is not an i32 permutation of K columns", "[gemm_q]") {
    QWeight q;
    q.group = 4;
    q.codes.assign(8, 1);
    q.scale.assign(8, 0);
    std::vector<float> x(4, 1.0f), y(2);
    q.perm = {2, 0, 3, 1};
    CHECK(gemm_q(x, 1, 2, 4, q, nullptr, y) == RAD_OK);
    QWeight repeated = q;
    repeated.perm = {2, 0, 2, 1};
    CHECK(gemm_q(x, 1, 2, 4, repeated, nullptr, y) == RAD_E_ARG);
    QWeight past = q;
    past.perm = {2, 0, 4, 1};
    CHECK(gemm_q(x, 1, 2, 4, past, nullptr, y) == RAD_E_ARG);
    QWeight u32 = q;
    u32.perm_dtype = RAD_U32;
    CHECK(gemm_q(x, 1, 2, 4, u32, nullptr, y) == RAD_E_DTYPE);
    QWeight short_table = q;
    short_table.perm = {1, 0, 2};
    CHECK(gemm_q(x, 1, 2, 4, short_table, nullptr, y) == RAD_E_SHAPE);
}
