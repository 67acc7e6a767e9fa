// Paged varlen attention: write this step's k/v into their cache slots, then for every query row
// attend over its sequence's cached positions <= its own (inside the window, if any).
#include <cmath>
#include <vector>

#include "ref_util.h"

namespace {

struct Cache {
    const RadTensor* t;
    int64_t block, heads, hd;
    // Element (position p of the sequence with block row `bt`, head h, dim d).
    int64_t index(const int32_t* bt, int64_t p, int64_t h, int64_t d) const {
        const int64_t blk = bt[p / block];
        return ((blk * block + p % block) * heads + h) * hd + d;
    }
};

}  // namespace

int ref_attention(const RadArgs* a) {
    const RadTensor *q = rad_arg_in(a, 0), *k = rad_arg_in(a, 1), *v = rad_arg_in(a, 2);
    RadTensor *kc = rad_arg_out(a, 3), *vc = rad_arg_out(a, 4);
    const RadTensor *pos = rad_arg_in(a, 5), *cu = rad_arg_in(a, 6), *bt = rad_arg_in(a, 7);
    RadTensor* y = rad_arg_out(a, 8);
    if (!ref::is_f32(q) || !ref::is_f32(k) || !ref::is_f32(v) || !ref::is_f32(y) || !kc || !vc || !pos || !cu || !bt) return RAD_E_DTYPE;
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
    Cache K{kc, block, Hkv, hd}, V{vc, block, Hkv, hd};

    for (int64_t s = 0; s < n_seq; ++s) {  // store
        const int32_t* tab = tables + s * stride;
        for (int64_t i = cus[s]; i < cus[s + 1]; ++i) {
            if (ps[i] < 0 || ps[i] / block >= stride) return RAD_E_SHAPE;
            const float* kr = ref::row<const float>(k, i);
            const float* vr = ref::row<const float>(v, i);
            for (int64_t h = 0; h < Hkv; ++h)
                for (int64_t d = 0; d < hd; ++d) {
                    rad_store_f32(kc->dtype, kc->data, K.index(tab, ps[i], h, d), kr[h * hd + d]);
                    rad_store_f32(vc->dtype, vc->data, V.index(tab, ps[i], h, d), vr[h * hd + d]);
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
                    for (int64_t d = 0; d < hd; ++d) dot += qh[d] * rad_load_f32(kc->dtype, kc->data, K.index(tab, j, kvh, d));
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
                    for (int64_t d = 0; d < hd; ++d) acc[d] += wgt * rad_load_f32(vc->dtype, vc->data, V.index(tab, j, kvh, d));
                }
                float* out = ref::row<float>(y, i) + h * hd;
                for (int64_t d = 0; d < hd; ++d) out[d] = acc[d];
            }
        }
    }
    return RAD_OK;
}
