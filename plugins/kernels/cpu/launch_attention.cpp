// launch_attention.cpp: the attention row (block size 16, as libref, so both read one cache
// layout). Checks the batch, stores this step's k/v in their cache slots (an fp8 cache quantised
// with a scale a token and kv head by rad_kv_fp8.h, as libref stores it), then runs one task per
// (row, kv head) on the pool; the tasks read every key and value, the step's own too, back from
// the cache.
#include <radiance/rad_kv_fp8.h>

#include <cstring>
#include <vector>

#include "launch_util.h"

namespace {

using namespace cpu;

struct StoreJob {
    RowsIn k, v;
    void *kc, *vc;
    int cdt;
    float *kscale, *vscale;  // an fp8 cache's, else null
    const int32_t *pos, *tables, *row_seq;
    int64_t stride, block, hkv, hd;
    int64_t row0;  // the batch's first row (cu_seqlens[0])
};

void put(void* cache, int dt, int64_t at, const float* src, int64_t n) {
    if (dt == RAD_F32) {
        std::memcpy(static_cast<float*>(cache) + at, src, static_cast<size_t>(n) * 4);
        return;
    }
    for (int64_t d = 0; d < n; ++d) rad_store_f32(dt, cache, at + d, src[d]);
}

// Each kv head's row quantised with its own scale: the scale's index is the row's slot * hkv + head.
void put_fp8(void* cache, float* scales, int64_t slot, const float* src, int64_t hkv, int64_t hd) {
    uint8_t* codes = static_cast<uint8_t*>(cache) + slot * hkv * hd;
    for (int64_t h = 0; h < hkv; ++h) scales[slot * hkv + h] = rad_kv_fp8_store(src + h * hd, hd, codes + h * hd);
}

// Rows row0 + [i0, i1): k and v of all kv heads into the slot of their position.
void store_rows(const StoreJob& s, int64_t i0, int64_t i1) {
    for (int64_t i = s.row0 + i0; i < s.row0 + i1; ++i) {
        const int64_t p = s.pos[i];
        const int32_t* tab = s.tables + static_cast<int64_t>(s.row_seq[i]) * s.stride;
        const int64_t slot = static_cast<int64_t>(tab[p / s.block]) * s.block + p % s.block;
        if (s.kscale) {
            put_fp8(s.kc, s.kscale, slot, s.k.row(i), s.hkv, s.hd);
            put_fp8(s.vc, s.vscale, slot, s.v.row(i), s.hkv, s.hd);
            continue;
        }
        put(s.kc, s.cdt, slot * s.hkv * s.hd, s.k.row(i), s.hkv * s.hd);
        put(s.vc, s.cdt, slot * s.hkv * s.hd, s.v.row(i), s.hkv * s.hd);
    }
}

// An fp8 cache's scale plane: f32 [blocks, block, hkv] beside codes [blocks, block, hkv, hd].
bool scales_fit(const RadTensor* sc, const RadTensor* codes) {
    if (!sc || sc->dtype != RAD_F32 || sc->rank != 3 || codes->rank != 4) return false;
    for (int d = 0; d < 3; ++d)
        if (sc->shape[d] != codes->shape[d]) return false;
    return true;
}

}  // namespace

int cpu_attention(const RadArgs* a) {
    const RadTensor *q = rad_arg_in(a, 0), *k = rad_arg_in(a, 1), *v = rad_arg_in(a, 2);
    RadTensor *kc = rad_arg_out(a, 3), *vc = rad_arg_out(a, 4);
    const RadTensor *pos = rad_arg_in(a, 5), *cu = rad_arg_in(a, 6), *bt = rad_arg_in(a, 7);
    RadTensor* y = rad_arg_out(a, 8);
    RadTensor *ks = rad_arg_out(a, 9), *vs = rad_arg_out(a, 10);
    if (!is_f32(q) || !is_f32(k) || !is_f32(v) || !is_f32(y) || !kc || !vc || !is_i32(pos) || !is_i32(cu) || !is_i32(bt))
        return RAD_E_DTYPE;
    // An 8-bit cache is e4m3 read through both scale planes; any other cache takes none.
    const bool fp8 = rad_kv_has_scales(kc->dtype);
    if (kc->dtype != vc->dtype || !(is_float_dtype(kc->dtype) || kc->dtype == RAD_FP8_E4M3)) return RAD_E_DTYPE;
    if (fp8 ? !scales_fit(ks, kc) || !scales_fit(vs, vc) : ks || vs) return RAD_E_ARG;
    const int64_t n = rad_args_geti(a, "n"), H = rad_args_geti(a, "n_head"), Hkv = rad_args_geti(a, "n_head_kv");
    const int64_t hd = rad_args_geti(a, "head_dim"), block = rad_args_geti(a, "block");
    if (Hkv <= 0 || H <= 0 || H % Hkv || hd <= 0 || block <= 0 || bt->rank != 2) return RAD_E_SHAPE;
    const int64_t n_seq = rad_tensor_elems(cu) - 1, stride = bt->shape[1];
    const int32_t* cus = static_cast<const int32_t*>(cu->data);
    const int32_t* ps = static_cast<const int32_t*>(pos->data);
    const int32_t* tables = static_cast<const int32_t*>(bt->data);
    if (n_seq < 0 || cus[0] < 0 || cus[n_seq] > n) return RAD_E_SHAPE;
    const int64_t cache_blocks = kc->rank == 4 ? kc->shape[0] : INT32_MAX;

    // Rows of the batch -> their sequence; every position and the blocks it needs are checked.
    const int64_t r0 = cus[0], r1 = cus[n_seq];
    static thread_local std::vector<int32_t> row_seq;
    row_seq.assign(static_cast<size_t>(std::max<int64_t>(r1, 0)), -1);
    const int64_t window = rad_args_geti_or(a, "window", 0);
    double work = 0;
    for (int64_t s = 0; s < n_seq; ++s) {
        if (cus[s + 1] < cus[s]) return RAD_E_SHAPE;
        for (int64_t i = cus[s]; i < cus[s + 1]; ++i) {
            if (ps[i] < 0 || ps[i] / block >= stride) return RAD_E_SHAPE;
            for (int64_t b = 0; b <= ps[i] / block; ++b)
                if (tables[s * stride + b] < 0 || tables[s * stride + b] >= cache_blocks) return RAD_E_SHAPE;
            row_seq[i] = static_cast<int32_t>(s);
            work += static_cast<double>(window > 0 ? std::min<int64_t>(ps[i] + 1, window) : ps[i] + 1);
        }
    }

    float* kscale = fp8 ? static_cast<float*>(ks->data) : nullptr;
    float* vscale = fp8 ? static_cast<float*>(vs->data) : nullptr;
    StoreJob st{rows_in(k), rows_in(v), kc->data, vc->data, kc->dtype, kscale, vscale, ps, tables, row_seq.data(), stride, block, Hkv, hd, r0};
    for_rows(r1 - r0, 2.0 * static_cast<double>(Hkv * hd), store_rows, st);

    AttnArgs at{rows_in(q),
                rows_out(y),
                kc->data,
                vc->data,
                kc->dtype,
                ps,
                tables,
                stride,
                row_seq.data(),
                H,
                Hkv,
                hd,
                block,
                window,
                static_cast<float>(rad_args_getf(a, "scale")),
                static_cast<float>(rad_args_getf_or(a, "softcap", 0.0)),
                kscale,
                vscale};
    const int64_t tasks = (r1 - r0) * Hkv;
    const int threads = threads_for(work * 4.0 * static_cast<double>(H * hd), kMinWorkPerThread);
    const auto fn = kernels().attention;
    parallel_for(tasks, threads, [&](int64_t t) { fn(at, r0 * Hkv + t); });
    return RAD_OK;
}
