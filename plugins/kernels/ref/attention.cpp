// Paged varlen attention: write this step's k/v into their cache slots, then for every query row
// attend over its sequence's cached positions <= its own (inside the window, if any). Every key
// and value, the step's own included, is read back from the cache: with an fp8 cache a row's
// attention depends only on the cached bytes (prefill and decode read the same values).
#include <cmath>
#include <vector>

#include <radiance/rad_kv_fp8.h>
#include "ref_util.h"

namespace {

struct Cache {
    const RadTensor* t;
    int64_t block, heads, hd;
    const RadTensor* scale;  // f32 [blocks, block, heads] for an fp8 cache, else null
    // The slot of (position p of the sequence with block row `bt`, head h): its scale's index.
    int64_t slot(const int32_t* bt, int64_t p, int64_t h) const { return (bt[p / block] * block + p % block) * heads + h; }
    // Element (position p, head h, dim d).
    int64_t index(const int32_t* bt, int64_t p, int64_t h, int64_t d) const { return slot(bt, p, h) * hd + d; }
    // One head's row of a step into its slot: through its scale for fp8, else narrowed value by value.
    void store(const int32_t* bt, int64_t p, int64_t h, const float* x) const {
        if (scale) {
            uint8_t* codes = static_cast<uint8_t*>(t->data) + index(bt, p, h, 0);
            static_cast<float*>(scale->data)[slot(bt, p, h)] = rad_kv_fp8_store(x, hd, codes);
            return;
        }
        for (int64_t d = 0; d < hd; ++d) rad_store_f32(t->dtype, t->data, index(bt, p, h, d), x[d]);
    }
    float load(const int32_t* bt, int64_t p, int64_t h, int64_t d) const {
        if (scale)
            return rad_kv_fp8_load(static_cast<const uint8_t*>(t->data)[index(bt, p, h, d)],
                                   static_cast<const float*>(scale->data)[slot(bt, p, h)]);
        return rad_load_f32(t->dtype, t->data, index(bt, p, h, d));
    }
};

}  // namespace

int ref_attention(const RadArgs* a) {
    const RadTensor *q = rad_arg_in(a, 0), *k = rad_arg_in(a, 1), *v = rad_arg_in(a, 2);
    RadTensor *kc = rad_arg_out(a, 3), *vc = rad_arg_out(a, 4);
    const RadTensor *pos = rad_arg_in(a, 5), *cu = rad_arg_in(a, 6), *bt = rad_arg_in(a, 7);
    RadTensor* y = rad_arg_out(a, 8);
    const RadTensor *ks = rad_arg_in(a, 9), *vs = rad_arg_in(a, 10);
    if (!ref::is_f32(q) || !ref::is_f32(k) || !ref::is_f32(v) || !ref::is_f32(y) || !kc || !vc || !pos || !cu || !bt) return RAD_E_DTYPE;
    // An 8-bit cache is read through its scales (e4m3 only); any other cache takes none.
    const bool fp8 = rad_kv_has_scales(kc->dtype);
    if (kc->dtype != vc->dtype || (fp8 && kc->dtype != RAD_FP8_E4M3)) return RAD_E_DTYPE;
    if (fp8 && (!ref::is_f32(ks) || !ref::is_f32(vs))) return RAD_E_ARG;
    if (!fp8 && (ks || vs)) return RAD_E_ARG;
    const int64_t n = rad_args_geti(a, "n"), H = rad_args_geti(a, "n_head"), Hkv = rad_args_geti(a, "n_head_kv");
    const int64_t hd = rad_args_geti(a, "head_dim"), block = rad_args_geti(a, "block");
    const int64_t window = rad_args_geti_or(a, "window", 0);
    const float scale = static_cast<float>(rad_args_getf(a, "scale"));
    const float softcap = static_cast<float>(rad_args_getf_or(a, "softcap", 0.0));
    if (Hkv <= 0 || H % Hkv || block <= 0 || bt->rank != 2) return RAD_E_SHAPE;
    const int64_t n_seq = rad_tensor_elems(cu) - 1, stride = bt->shape[1];
    const int32_t* cus = static_cast<const int32_t*>(cu->data);
    const int32_t* ps = static_cast<const int32_t*>(pos->data);
    const int32_t* tables = static_cast<const int32_t*>(bt->data);
    if (n_seq < 0 || cus[n_seq] > n) return RAD_E_SHAPE;
    Cache K{kc, block, Hkv, hd, fp8 ? ks : nullptr}, V{vc, block, Hkv, hd, fp8 ? vs : nullptr};

    for (int64_t s = 0; s < n_seq; ++s) {  // store
        const int32_t* tab = tables + s * stride;
        for (int64_t i = cus[s]; i < cus[s + 1]; ++i) {
            if (ps[i] < 0 || ps[i] / block >= stride) return RAD_E_SHAPE;
            const float* kr = ref::row<const float>(k, i);
            const float* vr = ref::row<const float>(v, i);
            for (int64_t h = 0; h < Hkv; ++h) {
                K.store(tab, ps[i], h, kr + h * hd);
                V.store(tab, ps[i], h, vr + h * hd);
            }
        }
    }
    std::vector<float> score, acc(static_cast<size_t>(hd));
    const int64_t group = H / Hkv;
    for (int64_t s = 0; s < n_seq; ++s) {  // attend
        const int32_t* tab = tables + s * stride;
        for (int64_t i = cus[s]; i < cus[s + 1]; ++i) {
            const int64_t p = ps[i];
            const int64_t first = window > 0 ? std::max<int64_t>(0, p - window + 1) : 0;
            score.assign(static_cast<size_t>(p - first + 1), 0.0f);
            for (int64_t h = 0; h < H; ++h) {
                const float* qh = ref::row<const float>(q, i) + h * hd;
                const int64_t kvh = h / group;
                float mx = -INFINITY;
                for (int64_t j = first; j <= p; ++j) {
                    float dot = 0.0f;
                    for (int64_t d = 0; d < hd; ++d) dot += qh[d] * K.load(tab, j, kvh, d);
                    float sc = dot * scale;
                    if (softcap > 0.0f) sc = softcap * std::tanh(sc / softcap);
                    score[j - first] = sc;
                    mx = std::fmax(mx, sc);
                }
                float sum = 0.0f;
                for (auto& e : score) {
                    e = std::exp(e - mx);
                    sum += e;
                }
                std::fill(acc.begin(), acc.end(), 0.0f);
                for (int64_t j = first; j <= p; ++j) {
                    const float wgt = score[j - first] / sum;
                    for (int64_t d = 0; d < hd; ++d) acc[d] += wgt * V.load(tab, j, kvh, d);
                }
                float* out = ref::row<float>(y, i) + h * hd;
                for (int64_t d = 0; d < hd; ++d) out[d] = acc[d];
            }
        }
    }
    return RAD_OK;
}
