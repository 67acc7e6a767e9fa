// gptq: GPTQ (Frantar et al., 2022), written from the paper's algorithm. Each row of a weight is
// quantised column by column, and the error a column's rounding leaves is spread over the columns
// not yet quantised, weighted by the inverse Hessian of the layer's reconstruction error
// ||X W^T - X W'^T||^2, so that what one column loses the others make up for on the inputs the
// model actually sees. The Hessian comes from calibration: the engine's tap (RADIANCE_CALIB_DIR,
// or rad-convert --calib TEXT) sums X^T X of the inputs of each weight into a folder, given here as
// calib=DIR.
//
//   H = 2 X^T X / n, a column no input ever reached (H_ii = 0) gets H_ii = 1 and its weights 0
//   (nothing reads them), plus damp * mean(diag H) on the diagonal so H is safely positive
//   definite; U = the upper Cholesky factor of H^-1 (H^-1 = U^T U). For each row w, for each
//   column j in order: at the start of a group its scale and zero point come from the group's
//   values as they are now (already moved by the errors of the columns before), q = the code of
//   w[j] exactly as rtn chooses it, e = (w[j] - value(q)) / U[j][j], w[k] -= e U[j][k] for k > j.
//
// U comes from one Cholesky factorisation (gptq_factor.cpp); the sweep goes in the paper's lazy
// batches of columns, rows on every thread (gptq_sweep.cpp), which only reorder the updates for the
// cache: the bytes are the column-by-column sweep's. The planes are exactly rtn's for the
// same bits / group / zero / scale (affine.h), so every kernel and the core's decoder read them;
// with H a multiple of the identity nothing is spread and the bytes are rtn's.
//
// act_order=1 takes the columns in descending diag(H) (the inputs of largest energy first, while
// the most columns remain to absorb their error) and stores them in that order: the encoding gets
// the `perm` transform and its table t.perm (i32 [1 x K]), stored column j holding original column
// perm[j] (w[n][perm[j]] = v[n][j], rad_decode.h), so the groups are runs of the stored order. The
// core's decoder and gemm_q's perm operand read it; an architecture plugin must pass the table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "affine.h"
#include "gptq_factor.h"
#include "gptq_sweep.h"
#include "gram_file.h"
#include "options.h"
#include "quantizers.h"

namespace quant {
namespace {

const RadQuantOption kOptions[] = {
    {"bits", RAD_P_INT, 0, "4", "code width: 4 or 8"},
    {"group", RAD_P_INT, 0, "128", "columns one scale covers (must divide the row); 0: one scale per row"},
    {"zero", RAD_P_INT, 0, "0", "1: unsigned codes and a zero point per group; 0: symmetric signed codes (rtn's convention)"},
    {"scale", RAD_P_STR, 0, "f16", "dtype of the stored scales: f16, bf16 or f32"},
    {"damp", RAD_P_F64, 0, "0.01", "added to H's diagonal, as a fraction of its mean (0.01: 1%)"},
    {"act_order", RAD_P_INT, 0, "0", "1: columns in descending diag(H) order, stored permuted (transform perm, table t.perm)"},
    {"calib", RAD_P_STR, 0, "", "the calibration tap's folder of input Gram matrices (required; rad-convert --calib TEXT makes one)"},
};
constexpr int kNOptions = sizeof kOptions / sizeof kOptions[0];

int refuse(int rc, const std::string& why) {
    std::fprintf(stderr, "gptq: %s\n", why.c_str());
    return rc;
}

struct Settings {
    int64_t bits = 4, group = 128, zero = 0, act_order = 0;
    double damp = 0.01;
    int sdt = RAD_DT_NONE;
    std::string calib;
};

int settings(const char* const* keys, const char* const* vals, int n, Settings* s) {
    const Options o(kOptions, kNOptions, keys, vals, n);
    if (!o.known() || !o.integer("bits", &s->bits) || !o.integer("group", &s->group) || !o.integer("zero", &s->zero) ||
        !o.integer("act_order", &s->act_order))
        return RAD_E_ARG;
    char* end = nullptr;
    const std::string damp = o.text("damp");
    s->damp = std::strtod(damp.c_str(), &end);
    if (damp.empty() || *end || !std::isfinite(s->damp) || s->damp < 0) return refuse(RAD_E_ARG, "damp=" + damp + " is not a fraction >= 0");
    s->sdt = float_dtype(o.text("scale"));
    s->calib = o.text("calib");
    if (s->act_order != 0 && s->act_order != 1) return refuse(RAD_E_ARG, "act_order=" + std::to_string(s->act_order) + " is not 0 or 1");
    if (s->calib.empty()) return refuse(RAD_E_ARG, "calib=DIR is required (the calibration tap's folder; rad-convert --calib TEXT makes one)");
    return RAD_OK;
}

// What a weight's quantisation needs of its Hessian, made once and kept for its row blocks.
struct Prepared {
    std::string key;  // what it was made from: key_of()
    int64_t K = 0;
    std::vector<double> u;     // K x K, the upper Cholesky factor of H^-1 (below the diagonal unused)
    std::vector<uint8_t> dead;  // columns no calibration input reached (original order)
    std::vector<int32_t> perm;  // stored column j is original column perm[j] (the identity without act_order)
};

// A weight's factor is made from: the folder, as its index was last written (a folder rewritten
// by another calibration run is read again), the Gram file the index names for the weight (so
// the weights that read one input, a layer's q, k and v or its gate and up, share one factor),
// the row width, damp and act_order.
std::string key_of(const std::string& name, int64_t cols, const Settings& s) {
    std::error_code ec;
    const auto t = std::filesystem::last_write_time(s.calib + "/index.txt", ec);
    const std::string file = gram_file_of(s.calib, name);
    return s.calib + "\n" + (file.empty() ? "?" + name : file) + "\n" + std::to_string(cols) + "\n" + std::to_string(s.damp) + "\n" + std::to_string(s.act_order) + "\n" +
           std::to_string(ec ? 0 : t.time_since_epoch().count());
}

int prepare(const std::string& name, int64_t cols, const Settings& s, Prepared* p) {
    Gram gr;
    std::string why;
    if (!read_gram(s.calib, name, &gr, &why)) return refuse(RAD_E_ARG, why);
    if (gr.K != cols)
        return refuse(RAD_E_SHAPE, "calib=" + s.calib + ": weight '" + name + "' has rows of " + std::to_string(cols) +
                                       " values, its Gram matrix is " + std::to_string(gr.K) + " x " + std::to_string(gr.K));
    if (gr.tokens <= 0) return refuse(RAD_E_ARG, "calib=" + s.calib + ": the Gram matrix of weight '" + name + "' sums no input rows");
    const int64_t K = cols;
    std::vector<double>& h = gr.g;
    p->dead.assign(static_cast<size_t>(K), 0);
    double mean = 0;
    for (int64_t i = 0; i < K * K; ++i) h[i] *= 2.0 / static_cast<double>(gr.tokens);
    for (int64_t i = 0; i < K; ++i) {
        if (h[i * K + i] == 0) {
            p->dead[i] = 1;
            h[i * K + i] = 1;
        }
        mean += h[i * K + i] / static_cast<double>(K);
    }
    // act_order: the columns by descending diag(H) (ties in column order), H taken in that order
    p->perm.resize(static_cast<size_t>(K));
    for (int64_t i = 0; i < K; ++i) p->perm[i] = static_cast<int32_t>(i);
    if (s.act_order) {
        std::stable_sort(p->perm.begin(), p->perm.end(), [&](int32_t a, int32_t b) { return h[a * K + a] > h[b * K + b]; });
        std::vector<double> hp(static_cast<size_t>(K * K));
        for (int64_t i = 0; i < K; ++i)
            for (int64_t j = 0; j < K; ++j) hp[i * K + j] = h[static_cast<int64_t>(p->perm[i]) * K + p->perm[j]];
        h.swap(hp);
    }
    for (int64_t i = 0; i < K; ++i) h[i * K + i] += s.damp * mean;
    if (!inverse_upper_factor(std::move(h), K, &p->u))
        return refuse(RAD_E_ARG, "calib=" + s.calib + ": the Hessian of weight '" + name + "' is not positive definite with damp=" +
                                     std::to_string(s.damp) + " (try a larger damp)");
    p->K = K;
    p->key = key_of(name, cols, s);
    return RAD_OK;
}

// The last few factors, most recent first: a weight's row blocks arrive one after another, and the
// weights sharing an input come close together (a checkpoint's order puts o_proj between k and q).
// At most kKept, so an 8B's conversion holds a down projection's 1.6 GB and a few 134 MB ones.
constexpr size_t kKept = 3;
std::mutex g_mutex;
std::vector<std::shared_ptr<const Prepared>> g_kept;

int prepared(const std::string& name, int64_t cols, const Settings& s, std::shared_ptr<const Prepared>* out) {
    std::lock_guard<std::mutex> lock(g_mutex);
    const std::string key = key_of(name, cols, s);
    auto hit = std::find_if(g_kept.begin(), g_kept.end(), [&](const auto& p) { return p->key == key; });
    std::shared_ptr<const Prepared> p;
    if (hit != g_kept.end()) {
        p = *hit;
        g_kept.erase(hit);
    } else {
        auto made = std::make_shared<Prepared>();
        if (int rc = prepare(name, cols, s, made.get()); rc != RAD_OK) return rc;
        p = std::move(made);
    }
    g_kept.insert(g_kept.begin(), p);
    if (g_kept.size() > kKept) g_kept.pop_back();
    *out = p;
    return RAD_OK;
}

int encoding(const char* name, int64_t rows, int64_t cols, const char* const* keys, const char* const* vals, int n, RadEncoding* out) {
    Settings s;
    if (int rc = settings(keys, vals, n, &s); rc != RAD_OK) return rc;
    if (int rc = affine_encoding(s.bits, s.group, s.zero, s.sdt, rows, cols, out); rc != RAD_OK) return rc;
    if (s.act_order && rad_encoding_add_perm(out, cols) != RAD_OK) return refuse(RAD_E_ARG, "act_order=1: the encoding has no room for t.perm");
    Gram gr;  // the folder and the weight's entry checked now, before the converter writes anything
    std::string why;
    if (!read_gram(s.calib, name, &gr, &why)) return refuse(RAD_E_ARG, why);
    if (gr.K != cols)
        return refuse(RAD_E_SHAPE, "calib=" + s.calib + ": weight '" + std::string(name) + "' has rows of " + std::to_string(cols) +
                                       " values, its Gram matrix is " + std::to_string(gr.K) + " x " + std::to_string(gr.K));
    return RAD_OK;
}

int64_t row_block(const RadEncoding*, int64_t, int64_t cols) { return rows_per_block(cols, 1); }

int quantize(const RadEncoding* enc, const RadQuantInput* in, void* const* planes) {
    Settings s;
    if (int rc = settings(in->opt_keys, in->opt_vals, in->n_opts, &s); rc != RAD_OK) return rc;
    const int codes = rad_encoding_plane(enc, "codes"), scale = rad_encoding_plane(enc, "scale"), zero = rad_encoding_plane(enc, "zero");
    const int perm = rad_encoding_plane(enc, "t.perm");
    if (codes < 0 || scale < 0 || !in->data || (perm >= 0) != (s.act_order != 0)) return RAD_E_ARG;
    const int code_dt = enc->planes[codes].dtype, sdt = enc->planes[scale].dtype;
    const int64_t K = in->cols, group = enc->planes[scale].block_c ? enc->planes[scale].block_c : K;
    if (K % group != 0) return RAD_E_SHAPE;
    std::shared_ptr<const Prepared> p;
    if (int rc = prepared(in->name, K, s, &p); rc != RAD_OK) return rc;
    if (perm >= 0)  // the table is whole in every call (a TABLE plane is not split by rows)
        for (int64_t j = 0; j < K; ++j) std::memcpy(static_cast<uint8_t*>(planes[perm]) + 4 * j, &p->perm[j], 4);
    std::vector<double> w(static_cast<size_t>(in->n_rows * K));  // the rows in stored (processing) order
    for (int64_t i = 0; i < in->n_rows; ++i)
        for (int64_t k = 0; k < K; ++k) w[i * K + k] = p->dead[p->perm[k]] ? 0.0 : in->data[i * K + p->perm[k]];
    const SweepPlanes out{static_cast<uint8_t*>(planes[codes]),
                          plane_pitch(enc->planes[codes], in->rows, K),
                          static_cast<uint8_t*>(planes[scale]),
                          plane_pitch(enc->planes[scale], in->rows, K),
                          zero >= 0 ? static_cast<uint8_t*>(planes[zero]) : nullptr,
                          zero >= 0 ? plane_pitch(enc->planes[zero], in->rows, K) : 0,
                          code_dt,
                          sdt,
                          group};
    gptq_sweep(p->u.data(), K, w.data(), in->n_rows, out);
    return RAD_OK;
}

}  // namespace

const RadQuantizerInfo kGptq = {
    "gptq",    "GPTQ: int4 or int8 codes as rtn's, each column's rounding error spread over the rest by the calibrated Hessian (calib=DIR)",
    kOptions,  kNOptions,
    0,         encoding,
    row_block, quantize,
    nullptr};

}  // namespace quant
