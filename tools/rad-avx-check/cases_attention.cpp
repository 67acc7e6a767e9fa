// attention cases: paged varlen batches (decode rows, whole prompts, prefill chunks after cached
// context, and mixes of them), GQA / MQA / MHA head layouts of real models, head_dim 64 / 128 and
// an odd 72, sliding windows, softcap, and f32 / bf16 / f16 / fp8 caches. The caches start full of
// random values: positions before a step's rows are "earlier steps"; blocks are handed out in a
// shuffled order so every block-table lookup matters.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cases.h"

namespace avxcheck {
namespace {

struct Seq {
    int64_t cached;  // positions already in the cache
    int64_t rows;    // this step's rows (positions cached .. cached + rows - 1)
};

constexpr int64_t kBlock = 16;  // the block libref and libcpu serve

// An fp8 cache plane (random e4m3 codes, never NaN) and its scales (f32 [blocks, block, heads],
// positive, so the cached values are about 1): what earlier steps left, rad_kv_fp8.h's layout.
Operand fp8_codes(Gen& g, int64_t blocks, int64_t heads, int64_t hd) {
    Operand o;
    o.dtype = RAD_FP8_E4M3;
    o.rank = 4;
    o.shape[0] = blocks;
    o.shape[1] = kBlock;
    o.shape[2] = heads;
    o.shape[3] = hd;
    o.bytes.resize(static_cast<size_t>(blocks * kBlock * heads * hd));
    for (auto& b : o.bytes) {
        b = static_cast<uint8_t>(g.below(256));
        if ((b & 0x7f) == 0x7f) b ^= 0x08;
    }
    return o;
}
Operand fp8_scales(Gen& g, int64_t blocks, int64_t heads) {
    Operand o;
    o.rank = 3;
    o.shape[0] = blocks;
    o.shape[1] = kBlock;
    o.shape[2] = heads;
    o.bytes.resize(static_cast<size_t>(blocks * kBlock * heads) * 4);
    for (int64_t i = 0; i < blocks * kBlock * heads; ++i) {
        const float s = g.uniform(0.5f / 448.0f, 4.0f / 448.0f);
        std::memcpy(o.bytes.data() + i * 4, &s, 4);
    }
    return o;
}

void attention(Gen& g, std::vector<Case>& out, int64_t H, int64_t Hkv, int64_t hd, std::vector<Seq> seqs, int64_t window = 0,
               double softcap = 0, int cdt = RAD_F32, int64_t pad = 0) {
    Case c;
    c.op = "attention";
    std::string shape;
    int64_t n = 0, stride = 1;
    std::vector<int32_t> pos, cu{0};
    for (auto& s : seqs) {
        shape += (shape.empty() ? "" : ",") + std::to_string(s.cached) + "+" + std::to_string(s.rows);
        for (int64_t r = 0; r < s.rows; ++r) pos.push_back(static_cast<int32_t>(s.cached + r));
        n += s.rows;
        cu.push_back(static_cast<int32_t>(n));
        stride = std::max(stride, (s.cached + s.rows + kBlock - 1) / kBlock);
    }
    const int64_t n_seq = static_cast<int64_t>(seqs.size()), blocks = n_seq * stride + 3;
    std::vector<int32_t> ids(static_cast<size_t>(blocks));
    for (int64_t b = 0; b < blocks; ++b) ids[b] = static_cast<int32_t>(b);
    std::shuffle(ids.begin(), ids.end(), g.rng());
    std::vector<int32_t> tables(ids.begin(), ids.begin() + n_seq * stride);

    c.label = "attention H=" + std::to_string(H) + " Hkv=" + std::to_string(Hkv) + " hd=" + std::to_string(hd) + " seqs=" + shape +
              (window ? " window=" + std::to_string(window) : "") +
              (softcap > 0 ? " softcap=" + std::to_string(static_cast<int>(softcap)) : "") + " cache=" + rad_dtype_name(cdt) +
              (pad ? " pitch+" + std::to_string(pad) : "");
    c.params = {{"n", pint(n)},
                {"n_head", pint(H)},
                {"n_head_kv", pint(Hkv)},
                {"head_dim", pint(hd)},
                {"scale", pf64(1.0 / std::sqrt(static_cast<double>(hd)))}};
    if (window) c.params["window"] = pint(window);
    if (softcap > 0) c.params["softcap"] = pf64(softcap);
    c.params["kv_dtype"] = pstr(rad_dtype_name(cdt));
    const bool fp8 = cdt == RAD_FP8_E4M3;
    // q and k in U(-2, 2): scores of a few units, so the softmax is neither flat nor one-hot.
    c.opds.push_back(g.rows(n, H * hd, pad, -2, 2));
    c.opds.push_back(g.rows(n, Hkv * hd, pad, -2, 2));
    c.opds.push_back(g.rows(n, Hkv * hd, pad));
    c.opds.push_back(as_output(fp8 ? fp8_codes(g, blocks, Hkv, hd) : g.cache(cdt, blocks, kBlock, Hkv, hd)));
    c.opds.push_back(as_output(fp8 ? fp8_codes(g, blocks, Hkv, hd) : g.cache(cdt, blocks, kBlock, Hkv, hd)));
    c.opds.push_back(i32(pos));
    c.opds.push_back(i32(cu));
    c.opds.push_back(i32_2d(tables, n_seq, stride));
    c.opds.push_back(as_output(g.rows(n, H * hd, pad)));
    if (fp8) {  // k_scale, v_scale: the step's rows quantised by both libraries alike
        c.opds.push_back(as_output(fp8_scales(g, blocks, Hkv)));
        c.opds.push_back(as_output(fp8_scales(g, blocks, Hkv)));
    }
    c.tol = kDot;
    out.push_back(std::move(c));
}

}  // namespace

void attention_cases(Gen& g, std::vector<Case>& out) {
    // Qwen2.5-0.5B: 14 query heads on 2 kv heads, head_dim 64.
    attention(g, out, 14, 2, 64, {{0, 1}, {39, 1}, {299, 1}});
    attention(g, out, 14, 2, 64, {{0, 17}});
    attention(g, out, 14, 2, 64, {{20, 17}});
    attention(g, out, 14, 2, 64, {{5, 1}, {0, 17}, {40, 3}}, 0, 0, RAD_F32, 5);
    // Llama-3-8B-like: 32 on 8, head_dim 128; every cache dtype.
    for (int cdt : {RAD_F32, RAD_BF16, RAD_F16}) attention(g, out, 32, 8, 128, {{3, 1}, {0, 9}, {64, 2}}, 0, 0, cdt);
    attention(g, out, 32, 8, 128, {{1000, 1}, {700, 1}});
    attention(g, out, 8, 1, 64, {{100, 1}, {0, 64}});  // MQA
    attention(g, out, 4, 4, 128, {{0, 33}});           // MHA
    // Mistral-like sliding window, and Gemma-2-like softcap, alone and together.
    attention(g, out, 16, 8, 64, {{40, 1}, {10, 17}, {0, 3}}, 16);
    attention(g, out, 16, 8, 64, {{40, 1}, {10, 17}}, 0, 30.0);
    attention(g, out, 8, 2, 72, {{30, 3}, {0, 20}}, 5, 5.0);
    attention(g, out, 8, 2, 72, {{7, 1}}, 0, 0, RAD_BF16);
    // An fp8 cache (rad_kv_fp8.h): decode rows, a prompt after a prefix, a mix; head_dim 128, 64
    // (the register-resident accumulators) and the odd 72 (the generic path), a window.
    attention(g, out, 32, 8, 128, {{3, 1}, {0, 9}, {64, 2}}, 0, 0, RAD_FP8_E4M3);
    attention(g, out, 14, 2, 64, {{5, 1}, {0, 17}, {40, 3}}, 0, 0, RAD_FP8_E4M3, 5);
    attention(g, out, 8, 2, 72, {{30, 3}, {0, 20}}, 5, 5.0, RAD_FP8_E4M3);
}

}  // namespace avxcheck
