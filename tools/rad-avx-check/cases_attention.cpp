// attention cases: paged varlen batches (decode rows, whole prompts, prefill chunks after cached
// context, and mixes of them), GQA / MQA / MHA head layouts of real models, head_dim 64 / 128 and
// an odd 72, sliding windows, softcap, and f32 / bf16 / f16 caches. The caches start full of
// random values: positions before a step's rows are "earlier steps"; blocks are handed out in a
// shuffled order so every block-table lookup matters.
#include <algorithm>
#include <cmath>
#include <string>

#include "cases.h"

namespace avxcheck {
namespace {

struct Seq {
    int64_t cached;  // positions already in the cache
    int64_t rows;    // this step's rows (positions cached .. cached + rows - 1)
};

constexpr int64_t kBlock = 16;  // the block libref and libcpu serve

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
    // q and k in U(-2, 2): scores of a few units, so the softmax is neither flat nor one-hot.
    c.opds.push_back(g.rows(n, H * hd, pad, -2, 2));
    c.opds.push_back(g.rows(n, Hkv * hd, pad, -2, 2));
    c.opds.push_back(g.rows(n, Hkv * hd, pad));
    c.opds.push_back(as_output(g.cache(cdt, blocks, kBlock, Hkv, hd)));
    c.opds.push_back(as_output(g.cache(cdt, blocks, kBlock, Hkv, hd)));
    c.opds.push_back(i32(pos));
    c.opds.push_back(i32(cu));
    c.opds.push_back(i32_2d(tables, n_seq, stride));
    c.opds.push_back(as_output(g.rows(n, H * hd, pad)));
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
}

}  // namespace avxcheck
