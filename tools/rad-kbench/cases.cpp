// cases.cpp: the op cases. Values are drawn so that every op computes something non-trivial
// (no zeros: they hide unwritten outputs), ids and positions are valid, and KV block tables are
// shuffled so paging is exercised.
#include "cases.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>

namespace radiance::kbench {
namespace {

struct Filler {
    std::mt19937_64 rng;
    std::vector<uint8_t> floats(int dt, int64_t n, float scale) {
        std::normal_distribution<float> d(0.0f, scale);
        std::vector<uint8_t> out(static_cast<size_t>(n) * static_cast<size_t>(rad_dtype_bits(dt) / 8));
        for (int64_t i = 0; i < n; ++i) rad_store_f32(dt, out.data(), i, d(rng));
        return out;
    }
    std::vector<uint8_t> ints(const std::vector<int32_t>& v) {
        std::vector<uint8_t> out(v.size() * 4);
        std::memcpy(out.data(), v.data(), out.size());
        return out;
    }
};

Param pi(const char* n, int64_t v) { return {n, RAD_P_INT, v, 0, {}}; }
Param pf(const char* n, double v) { return {n, RAD_P_F64, 0, v, {}}; }
Param ps(const char* n, const char* v) { return {n, RAD_P_STR, 0, 0, v}; }

Operand f32(Filler& f, std::vector<int64_t> shape, bool out = false, float scale = 1.0f) {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return {RAD_F32, shape, out, f.floats(RAD_F32, n, scale)};
}
Operand wgt(Filler& f, int dt, std::vector<int64_t> shape, float scale) {
    int64_t n = 1;
    for (auto d : shape) n *= d;
    return {dt, shape, false, f.floats(dt, n, scale)};
}
Operand i32(Filler& f, std::vector<int32_t> v) { return {RAD_I32, {static_cast<int64_t>(v.size())}, false, f.ints(v)}; }

// A case whose operands are already drawn (in order, so a seed gives the same bytes).
Case make_case(std::string op, std::string label, std::vector<Param> params, std::vector<Operand> operands, int64_t bytes) {
    Case c;
    c.op = std::move(op);
    c.label = std::move(label);
    c.params = std::move(params);
    c.operands = std::move(operands);
    c.bytes = bytes;
    return c;
}

struct Dims {
    int64_t hidden, ff, heads, kv_heads, head_dim, vocab;
};

void gemms(std::vector<Case>& out, Filler& f, const Dims& d, const std::vector<int64_t>& ms) {
    const std::vector<std::pair<int64_t, int64_t>> nk = {
        {(d.heads + 2 * d.kv_heads) * d.head_dim, d.hidden}, {d.hidden, d.heads * d.head_dim}, {2 * d.ff, d.hidden}, {d.hidden, d.ff}};
    for (int64_t M : ms)
        for (auto [N, K] : nk) {
            if (M * N * K > (int64_t{1} << 33)) continue;  // the reference must finish
            Case c;
            c.op = "gemm";
            c.label = "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) + " bf16";
            c.params = {pi("M", M), pi("N", N), pi("K", K), ps("wdtype", "bf16")};
            c.operands = {f32(f, {M, K}), wgt(f, RAD_BF16, {N, K}, 1.0f / std::sqrt(static_cast<float>(K))), Operand{},
                          f32(f, {M, N}, true)};
            c.flops = 2 * M * N * K;
            c.bytes = N * K * 2 + M * K * 4 + M * N * 4;
            out.push_back(std::move(c));
        }
    for (int64_t M : ms) {  // the MLP's stacked [gate|up] projection with swiglu fused
        const int64_t N = d.ff, K = d.hidden;
        if (M * 2 * N * K > (int64_t{1} << 33)) continue;
        Case c;
        c.op = "gemm_swiglu";
        c.label = "M=" + std::to_string(M) + " N=2x" + std::to_string(N) + " K=" + std::to_string(K) + " bf16";
        c.params = {pi("M", M), pi("N", N), pi("K", K), ps("wdtype", "bf16")};
        c.operands = {f32(f, {M, K}), wgt(f, RAD_BF16, {2 * N, K}, 1.0f / std::sqrt(static_cast<float>(K))), f32(f, {M, N}, true)};
        c.flops = 4 * M * N * K;
        c.bytes = 2 * N * K * 2 + M * K * 4 + M * N * 4;
        out.push_back(std::move(c));
    }
    // The decode-path fusions on the layer's shapes: the output and down projections added into
    // the residual (gemm_add), the norm before the qkv projection (with a bias, as Qwen2's) and
    // before the gated MLP (rms_norm_gemm, rms_norm_gemm_swiglu).
    const float k_scale = 1.0f / std::sqrt(static_cast<float>(d.hidden));
    for (int64_t M : ms) {
        for (int64_t K : {d.heads * d.head_dim, d.ff}) {
            const int64_t N = d.hidden;
            if (M * N * K > (int64_t{1} << 33)) continue;
            Case c = make_case(
                "gemm_add", "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) + " bf16",
                {pi("M", M), pi("N", N), pi("K", K), ps("wdtype", "bf16")},
                {f32(f, {M, K}), wgt(f, RAD_BF16, {N, K}, 1.0f / std::sqrt(static_cast<float>(K))), Operand{}, f32(f, {M, N}, true)},
                N * K * 2 + M * K * 4 + M * N * 8);
            c.flops = 2 * M * N * K;
            out.push_back(std::move(c));
        }
        const int64_t K = d.hidden, N = (d.heads + 2 * d.kv_heads) * d.head_dim;
        std::vector<Param> norm_params = {pi("M", M), pi("N", N), pi("K", K), pf("eps", 1e-5), ps("wdtype", "bf16")};
        Case c = make_case("rms_norm_gemm", "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) + " bias",
                           norm_params,
                           {f32(f, {M, K}), wgt(f, RAD_BF16, {K}, 1.0f), wgt(f, RAD_BF16, {N, K}, k_scale), wgt(f, RAD_BF16, {N}, 0.1f),
                            f32(f, {M, N}, true)},
                           N * K * 2 + M * K * 4 + M * N * 4);
        c.flops = 2 * M * N * K;
        out.push_back(std::move(c));
        if (M * 2 * d.ff * K > (int64_t{1} << 33)) continue;
        norm_params[1] = pi("N", d.ff);
        c = make_case("rms_norm_gemm_swiglu", "M=" + std::to_string(M) + " N=2x" + std::to_string(d.ff) + " K=" + std::to_string(K),
                      norm_params,
                      {f32(f, {M, K}), wgt(f, RAD_BF16, {K}, 1.0f), wgt(f, RAD_BF16, {2 * d.ff, K}, k_scale), f32(f, {M, d.ff}, true)},
                      2 * d.ff * K * 2 + M * K * 4 + M * d.ff * 4);
        c.flops = 4 * M * d.ff * K;
        out.push_back(std::move(c));
    }
}

// gemm_q on the layer's projections in the forms rad-convert's quantisers write: int8 codes with
// an f16 scale per 128 columns, int4 with a zero point (u4) and without (i4, groups of 32), fp8
// per output channel and in 128 x 128 blocks, and the GGUF K-quants' imports (Q4_K: u4 with an
// f32 scale and min per 32, the min operand 6; Q5_K: u8 so; Q6_K: i8 with an f32 scale per 16), and
// GPTQ act-order's (u4 with a zero point and a random column order, the perm operand 7). Codes are
// random bytes (fp8 without its NaN codes), scales around 1 / (sqrt(K) * the codes' spread), so
// the products are of a layer's size.
void quantised_gemms(std::vector<Case>& out, Filler& f, const Dims& d, const std::vector<int64_t>& ms) {
    struct Form {
        const char* name;
        int qt, sdt;
        int64_t group, group_rows;  // 0: the whole K / N
        bool zero;
        float spread;  // the codes' typical magnitude
        bool min = false;
        bool perm = false;  // GPTQ act-order: a t.perm table (operand 7), x gathered by it
    };
    const Form forms[] = {{"i8 g128", RAD_I8, RAD_F16, 128, 1, false, 70},
                          {"u4 zero g128", RAD_U4, RAD_F16, 128, 1, true, 4},
                          {"i4 g32", RAD_I4, RAD_BF16, 32, 1, false, 4},
                          {"fp8 per row", RAD_FP8_E4M3, RAD_F32, 0, 1, false, 100},
                          {"fp8 128x128", RAD_FP8_E4M3, RAD_F32, 128, 128, false, 100},
                          {"u4 min g32 (Q4_K)", RAD_U4, RAD_F32, 32, 1, false, 8, true},
                          {"u8 min g32 (Q5_K)", RAD_U8, RAD_F32, 32, 1, false, 16, true},
                          {"i8 g16 (Q6_K)", RAD_I8, RAD_F32, 16, 1, false, 70},
                          {"u4 zero g128 act-order (perm)", RAD_U4, RAD_F16, 128, 1, true, 4, false, true}};
    const std::vector<std::pair<int64_t, int64_t>> nk = {
        {(d.heads + 2 * d.kv_heads) * d.head_dim, d.hidden}, {d.hidden, d.heads * d.head_dim}, {2 * d.ff, d.hidden}, {d.hidden, d.ff}};
    std::uniform_int_distribution<int> byte(0, 255);
    for (const Form& fm : forms)
        for (int64_t M : ms)
            for (auto [N, K] : nk) {
                if (M * N * K > (int64_t{1} << 33) || (fm.group && K % fm.group)) continue;
                const int64_t g = fm.group ? fm.group : K, gr = fm.group_rows, sr = (N + gr - 1) / gr, sc = (K + g - 1) / g;
                Operand codes{fm.qt, {N, K}, false, std::vector<uint8_t>(static_cast<size_t>(N * rad_row_bytes(fm.qt, K)))};
                for (auto& b : codes.init) {
                    b = static_cast<uint8_t>(byte(f.rng));
                    if (fm.qt == RAD_FP8_E4M3 && (b & 0x7f) == 0x7f) b ^= 0x08;  // not NaN
                }
                Operand scale = wgt(f, fm.sdt, {sr, sc}, 1.0f / (fm.spread * std::sqrt(static_cast<float>(K))));
                Operand zero;
                if (fm.zero) {
                    zero = Operand{fm.qt, {sr, sc}, false, std::vector<uint8_t>(static_cast<size_t>(sr * rad_row_bytes(fm.qt, sc)))};
                    for (auto& b : zero.init) b = static_cast<uint8_t>(0x77 + byte(f.rng) % 3 * 0x11);  // around the middle code
                }
                std::vector<Operand> opds;
                opds.push_back(f32(f, {M, K}));
                opds.push_back(std::move(codes));
                opds.push_back(std::move(scale));
                opds.push_back(std::move(zero));
                opds.push_back(Operand{});
                opds.push_back(f32(f, {M, N}, true));
                // a min about half the codes' range of steps: the unsigned codes centred, as Q4_K's are
                if (fm.min) opds.push_back(wgt(f, fm.sdt, {sr, sc}, 0.5f / std::sqrt(static_cast<float>(K))));
                if (fm.perm) {  // a random permutation of the columns, as act-order's Hessian order is
                    if (!fm.min) opds.push_back(Operand{});
                    std::vector<int32_t> perm(static_cast<size_t>(K));
                    for (int64_t k = 0; k < K; ++k) perm[static_cast<size_t>(k)] = static_cast<int32_t>(k);
                    std::shuffle(perm.begin(), perm.end(), f.rng);
                    Operand table{RAD_I32, {K}, false, std::vector<uint8_t>(static_cast<size_t>(K) * 4)};
                    std::memcpy(table.init.data(), perm.data(), table.init.size());
                    opds.push_back(std::move(table));
                }
                Case c = make_case("gemm_q", "M=" + std::to_string(M) + " N=" + std::to_string(N) + " K=" + std::to_string(K) + " " + fm.name,
                                   {pi("M", M), pi("N", N), pi("K", K), ps("qtype", rad_dtype_name(fm.qt)), pi("group", g),
                                    pi("group_rows", gr), ps("sdtype", rad_dtype_name(fm.sdt))},
                                   std::move(opds),
                                   N * static_cast<int64_t>(rad_row_bytes(fm.qt, K)) + M * K * 4 + M * N * 4);
                c.flops = 2 * M * N * K;
                out.push_back(std::move(c));
            }
}

// An fp8 cache plane as attention finds it: random e4m3 codes (never NaN) and a positive scale a
// (token, kv head) in the scale plane, so the cached values are about 1 in magnitude.
std::pair<Operand, Operand> fp8_cache(Filler& f, int64_t blocks, int64_t block, int64_t heads, int64_t hd) {
    Operand codes{RAD_FP8_E4M3, {blocks, block, heads, hd}, true, std::vector<uint8_t>(static_cast<size_t>(blocks * block * heads * hd))};
    std::uniform_int_distribution<int> byte(0, 255);
    for (auto& b : codes.init) {
        b = static_cast<uint8_t>(byte(f.rng));
        if ((b & 0x7f) == 0x7f) b ^= 0x08;  // not NaN
    }
    const int64_t n = blocks * block * heads;
    Operand scale{RAD_F32, {blocks, block, heads}, true, std::vector<uint8_t>(static_cast<size_t>(n) * 4)};
    std::uniform_real_distribution<float> s(0.5f / 448.0f, 4.0f / 448.0f);
    for (int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(scale.init.data())[i] = s(f.rng);
    return {std::move(codes), std::move(scale)};
}

// n_seq sequences of q_len rows each at the end of a ctx-long context; with n_decode > 0 that
// many one-row sequences come first, as in a server's mixed step (decode rows and a prompt chunk).
// With `rope` ("neox" with llama3 scaling, as Llama 3.1; "gptj" plain) the case is rope_attention,
// q and k compared too (turned in place). The cache is bf16, or with kv = RAD_FP8_E4M3 e4m3 codes
// and their scale planes (operands 9 and 10, compared too: the step's rows quantised alike).
void attention(std::vector<Case>& out, Filler& f, const Dims& d, int n_seq, int q_len, int ctx, int n_decode = 0,
               const char* rope = nullptr, int kv = RAD_BF16) {
    const int block = 16, per_seq = (ctx + block - 1) / block;
    const int64_t n = static_cast<int64_t>(n_seq) * q_len + n_decode;
    std::vector<int32_t> pos, cu{0}, tables(static_cast<size_t>((n_seq + n_decode) * per_seq));
    std::iota(tables.begin(), tables.end(), 0);
    std::shuffle(tables.begin(), tables.end(), f.rng);
    for (int s = 0; s < n_decode + n_seq; ++s) {
        const int rows = s < n_decode ? 1 : q_len;
        for (int i = 0; i < rows; ++i) pos.push_back(ctx - rows + i);
        cu.push_back(cu.back() + rows);
    }
    n_seq += n_decode;
    const int64_t kv_w = d.kv_heads * d.head_dim, blocks = static_cast<int64_t>(n_seq) * per_seq;
    Case c;
    c.op = "attention";
    c.label = n_decode ? std::to_string(n_decode) + " x 1 + " + std::to_string(n_seq - n_decode) + " x " + std::to_string(q_len) +
                             " rows, ctx " + std::to_string(ctx)
                       : std::to_string(n_seq) + " seq x " + std::to_string(q_len) + " rows, ctx " + std::to_string(ctx) + ", " +
                             rad_dtype_name(kv) + " KV";
    if (n_decode && kv != RAD_BF16) c.label += std::string(", ") + rad_dtype_name(kv) + " KV";
    c.params = {pi("n", n),
                pi("n_head", d.heads),
                pi("n_head_kv", d.kv_heads),
                pi("head_dim", d.head_dim),
                pf("scale", 1.0 / std::sqrt(static_cast<double>(d.head_dim))),
                pi("block", block)};
    const bool fp8 = kv == RAD_FP8_E4M3;
    c.params.push_back(ps("kv_dtype", rad_dtype_name(kv)));
    Operand kc, vc, ks, vs;  // the scales absent but for fp8
    if (fp8) {
        std::tie(kc, ks) = fp8_cache(f, blocks, block, d.kv_heads, d.head_dim);
        std::tie(vc, vs) = fp8_cache(f, blocks, block, d.kv_heads, d.head_dim);
    } else {
        kc = wgt(f, kv, {blocks, block, d.kv_heads, d.head_dim}, 1.0f);
        vc = wgt(f, kv, {blocks, block, d.kv_heads, d.head_dim}, 1.0f);
        kc.output = vc.output = true;
    }
    Operand bt = i32(f, tables);
    bt.shape = {n_seq, per_seq};
    const bool turned = rope != nullptr;
    c.operands = {
        f32(f, {n, d.heads * d.head_dim}, turned), f32(f, {n, kv_w}, turned), f32(f, {n, kv_w}), kc, vc, i32(f, pos), i32(f, cu), bt,
        f32(f, {n, d.heads * d.head_dim}, true)};
    if (fp8) {
        c.operands.push_back(std::move(ks));
        c.operands.push_back(std::move(vs));
    }
    if (turned) {
        const bool neox = rope[0] == 'n';
        c.op = "rope_attention";
        c.label += neox ? ", rope neox llama3" : ", rope gptj";
        for (Param p : {pi("rot_dim", d.head_dim), pf("theta", neox ? 500000.0 : 10000.0), ps("layout", rope),
                        ps("scaling", neox ? "llama3" : "none")})
            c.params.push_back(p);
        if (neox)
            for (Param p : {pf("factor", 8.0), pf("low_freq_factor", 1.0), pf("high_freq_factor", 4.0), pi("orig_ctx", 8192)})
                c.params.push_back(p);
    }
    c.flops = 4 * n * ctx * d.heads * d.head_dim;
    c.bytes = static_cast<int64_t>(n_seq) * ctx * kv_w * 2 * 2 + n * d.heads * d.head_dim * 8;
    out.push_back(std::move(c));
}

// Sampling on the card: every row its own settings (each kind of cut, together and alone, and
// the edges: greedy, top_p 0, top_k 1, top_k just under the vocabulary), logits at a realistic
// spread, and every other row rounded to halves so that many tokens tie at the cuts' thresholds.
void sampling(std::vector<Case>& out, Filler& f, const Dims& d, int64_t n) {
    struct Cfg {
        float temperature, top_p, min_p, top_k;
    };
    const float vk = static_cast<float>(d.vocab - 1);
    const Cfg cfgs[] = {{0.0f, 1.0f, 0.0f, 0.0f}, {1.0f, 1.0f, 0.0f, 0.0f},  {0.7f, 1.0f, 0.0f, 0.0f},    {0.8f, 0.95f, 0.0f, 40.0f},
                        {1.0f, 0.9f, 0.0f, 0.0f}, {1.0f, 1.0f, 0.05f, 0.0f}, {1.2f, 0.5f, 0.02f, 100.0f}, {1.0f, 0.0f, 0.0f, 0.0f},
                        {0.9f, 1.0f, 0.0f, 1.0f}, {1.0f, 1.0f, 0.0f, vk},    {1.5f, 0.99f, 0.0f, 0.0f},   {0.6f, 0.8f, 0.1f, 20.0f}};
    Operand x = f32(f, {n, d.vocab}, false, 3.0f);
    auto* v = reinterpret_cast<float*>(x.init.data());
    for (int64_t i = 1; i < n; i += 2)
        for (int64_t j = 0; j < d.vocab; ++j) v[i * d.vocab + j] = std::round(2.0f * v[i * d.vocab + j]) / 2.0f;
    std::vector<float> cfg;
    std::vector<double> u;
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (int64_t i = 0; i < n; ++i) {
        const size_t first = n == 1 ? 3 : 0;  // a lone row samples (top_k and top_p), not greedily
        const Cfg& c = cfgs[(static_cast<size_t>(i) + first) % (sizeof cfgs / sizeof cfgs[0])];
        cfg.insert(cfg.end(), {c.temperature, c.top_p, c.min_p, c.top_k});
        u.push_back(unit(f.rng));
    }
    Operand oc{RAD_F32, {n, 4}, false, std::vector<uint8_t>(cfg.size() * 4)}, ou{RAD_F64, {n}, false, std::vector<uint8_t>(u.size() * 8)};
    std::memcpy(oc.init.data(), cfg.data(), oc.init.size());
    std::memcpy(ou.init.data(), u.data(), ou.init.size());
    out.push_back(make_case(
        "sample",
        "n=" + std::to_string(n) + " vocab=" + std::to_string(d.vocab) + (n == 1 ? std::string(", top_k 40 top_p 0.95") : ", 12 settings"),
        {pi("n", n), pi("vocab", d.vocab)},
        {std::move(x), std::move(oc), std::move(ou), Operand{RAD_I32, {n}, true, std::vector<uint8_t>(static_cast<size_t>(n) * 4, 0xff)}},
        n * d.vocab * 4));
}

// Mixture-of-experts routing and the routed experts' MLPs on `e` experts of width `ff`, k picked:
// distinct experts a row, positive weights summing to one. The bytes are the routed experts'
// weights (each read once) and the rows.
void moe(std::vector<Case>& out, Filler& f, int64_t hidden, int64_t ff, int64_t e, int64_t k, const std::vector<int64_t>& rows,
         bool route, bool mlp) {
    const std::string shape =
        " dim=" + std::to_string(hidden) + " ff=" + std::to_string(ff) + " E=" + std::to_string(e) + " k=" + std::to_string(k);
    // The experts' weights drawn once for every row count (Qwen3-30B-A3B's are 600 M values).
    const Operand w13 = mlp ? wgt(f, RAD_BF16, {e * 2 * ff, hidden}, 1.0f / std::sqrt(static_cast<float>(hidden))) : Operand{};
    const Operand w2 = mlp ? wgt(f, RAD_BF16, {e * hidden, ff}, 1.0f / std::sqrt(static_cast<float>(ff))) : Operand{};
    for (int64_t n : rows) {
        if (route)
            out.push_back(make_case(
            "moe_route", "n=" + std::to_string(n) + " E=" + std::to_string(e) + " k=" + std::to_string(k) + " norm",
            {pi("n", n), pi("experts", e), pi("k", k), pi("norm", 1)},
            {f32(f, {n, e}, false, 2.0f), Operand{RAD_I32, {n, k}, true, std::vector<uint8_t>(n * k * 4, 0xff)}, f32(f, {n, k}, true)},
            n * (e + 2 * k) * 4));
        if (!mlp) continue;
        std::vector<int32_t> ids;
        std::vector<float> w;
        std::vector<bool> touched(static_cast<size_t>(e), false);
        std::vector<int32_t> perm(static_cast<size_t>(e));
        std::uniform_real_distribution<float> unit(0.1f, 1.0f);
        for (int64_t t = 0; t < n; ++t) {
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), f.rng);
            float sum = 0;
            std::vector<float> row;
            for (int64_t j = 0; j < k; ++j) {
                ids.push_back(perm[j]);
                touched[perm[j]] = true;
                row.push_back(unit(f.rng));
                sum += row.back();
            }
            for (float v : row) w.push_back(v / sum);
        }
        Operand oi{RAD_I32, {n, k}, false, f.ints(ids)}, ow{RAD_F32, {n, k}, false, std::vector<uint8_t>(w.size() * 4)};
        std::memcpy(ow.init.data(), w.data(), ow.init.size());
        const int64_t used = std::count(touched.begin(), touched.end(), true);
        Case c = make_case("moe_mlp", "n=" + std::to_string(n) + shape + " bf16",
                           {pi("n", n), pi("dim", hidden), pi("ff", ff), pi("experts", e), pi("k", k), ps("wdtype", "bf16")},
                           {f32(f, {n, hidden}), std::move(oi), std::move(ow), w13, w2, f32(f, {n, hidden}, true)},
                           used * 3 * ff * hidden * 2 + n * hidden * 8);
        c.flops = n * k * 6 * ff * hidden;
        out.push_back(std::move(c));
    }
}

}  // namespace

std::vector<Case> make_cases(const std::string& family, uint64_t seed, const std::function<bool(const std::string&)>& wanted) {
    Filler f{std::mt19937_64(seed)};
    auto want = [&](std::initializer_list<const char*> ops) {
        for (const char* op : ops)
            if (wanted(op)) return true;
        return false;
    };
    const bool small = family == "small";
    const Dims d = small ? Dims{512, 1376, 8, 2, 64, 4096} : Dims{4096, 14336, 32, 8, 128, 128256};
    std::vector<Case> out;
    const std::vector<int64_t> rows = small ? std::vector<int64_t>{1, 7, 64} : std::vector<int64_t>{1, 8, 64};
    // Two rows too for the gemms: the decode kernels specialise one and two rows (libgpu's block
    // gemv) apart from more.
    if (want({"gemm", "gemm_swiglu", "rms_norm_gemm", "rms_norm_gemm_swiglu"}))
        gemms(out, f, d, small ? std::vector<int64_t>{1, 2, 7, 64} : std::vector<int64_t>{1, 2, 8, 64});
    if (want({"gemm_q"})) quantised_gemms(out, f, d, small ? std::vector<int64_t>{1, 7, 20, 64} : std::vector<int64_t>{1, 8, 64});
    for (int64_t n : rows) {
        const std::string rows_label = "n=" + std::to_string(n);
        if (want({"rms_norm"})) out.push_back(make_case("rms_norm", rows_label + " dim=" + std::to_string(d.hidden),
                                {pi("n", n), pi("dim", d.hidden), pf("eps", 1e-5), ps("wdtype", "bf16")},
                                {f32(f, {n, d.hidden}), wgt(f, RAD_BF16, {d.hidden}, 1.0f), f32(f, {n, d.hidden}, true)},
                                n * d.hidden * 8 + d.hidden * 2));
        if (want({"add_rms_norm"})) out.push_back(
            make_case("add_rms_norm", rows_label + " dim=" + std::to_string(d.hidden),
                      {pi("n", n), pi("dim", d.hidden), pf("eps", 1e-5), ps("wdtype", "bf16")},
                      {f32(f, {n, d.hidden}, true), f32(f, {n, d.hidden}), wgt(f, RAD_BF16, {d.hidden}, 1.0f), f32(f, {n, d.hidden}, true)},
                      n * d.hidden * 16 + d.hidden * 2));
        std::vector<int32_t> pos;
        for (int64_t i = 0; i < n; ++i) pos.push_back(static_cast<int32_t>(1000 + 37 * i));
        if (want({"rope"})) out.push_back(make_case("rope", rows_label + " heads=" + std::to_string(d.heads) + " llama3",
                                {pi("n", n), pi("n_head", d.heads), pi("head_dim", d.head_dim), pi("rot_dim", d.head_dim),
                                 pf("theta", 500000.0), ps("layout", "neox"), ps("scaling", "llama3"), pf("factor", 8.0),
                                 pf("low_freq_factor", 1.0), pf("high_freq_factor", 4.0), pi("orig_ctx", 8192)},
                                {f32(f, {n, d.heads * d.head_dim}, true), i32(f, pos)}, n * d.heads * d.head_dim * 8));
        if (want({"rope"})) {  // Phi-3's longrope: two sequences, the second reaching orig_ctx only at its last rows (all of it long)
            std::string sf, lf;
            for (int64_t j = 0; j < d.head_dim / 2; ++j) {
                sf += (j ? "," : "") + std::to_string(1.0 + 0.05 * static_cast<double>(j));
                lf += (j ? "," : "") + std::to_string(1.0 + 0.9 * static_cast<double>(j));
            }
            const std::vector<int32_t> cu = {0, static_cast<int32_t>(n / 3), static_cast<int32_t>(n)};
            if (want({"rope"})) out.push_back(make_case("rope", rows_label + " heads=" + std::to_string(d.heads) + " longrope 2 seqs",
                                    {pi("n", n), pi("n_head", d.heads), pi("head_dim", d.head_dim), pi("rot_dim", d.head_dim),
                                     pf("theta", 10000.0), ps("layout", "neox"), ps("scaling", "longrope"), pf("factor", 32.0),
                                     pi("orig_ctx", pos[static_cast<size_t>(n / 2)]), pf("attn_factor", 1.19), ps("short_factor", sf.c_str()),
                                     ps("long_factor", lf.c_str())},
                                    {f32(f, {n, d.heads * d.head_dim}, true), i32(f, pos), i32(f, cu)}, n * d.heads * d.head_dim * 8));
        }
        if (want({"swiglu"})) out.push_back(make_case("swiglu", rows_label + " dim=" + std::to_string(d.ff), {pi("n", n), pi("dim", d.ff)},
                                {f32(f, {n, 2 * d.ff}), f32(f, {n, d.ff}, true)}, n * d.ff * 12));
        // Gemma 2's final logits: values well past the cap
        if (want({"softcap"})) out.push_back(make_case("softcap", rows_label + " vocab=" + std::to_string(d.vocab) + " cap=30",
                                {pi("n", n), pi("dim", d.vocab), pf("cap", 30.0)},
                                {f32(f, {n, d.vocab}, false, 100.0f), f32(f, {n, d.vocab}, true)}, n * d.vocab * 8));
        if (want({"add"})) out.push_back(make_case("add", rows_label + " dim=" + std::to_string(d.hidden), {pi("n", n), pi("dim", d.hidden)},
                                {f32(f, {n, d.hidden}), f32(f, {n, d.hidden}), f32(f, {n, d.hidden}, true)}, n * d.hidden * 12));
        std::vector<int32_t> ids;
        for (int64_t i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>((i * 7919 + 13) % d.vocab));
        if (want({"embed"})) out.push_back(make_case("embed", rows_label + " vocab=" + std::to_string(d.vocab),
                                {pi("n", n), pi("dim", d.hidden), pi("vocab", d.vocab), ps("wdtype", "bf16")},
                                {i32(f, ids), wgt(f, RAD_BF16, {d.vocab, d.hidden}, 1.0f), f32(f, {n, d.hidden}, true)}, n * d.hidden * 6));
        if (want({"argmax"})) out.push_back(make_case("argmax", rows_label + " vocab=" + std::to_string(d.vocab), {pi("n", n), pi("vocab", d.vocab)},
                                {f32(f, {n, d.vocab}), Operand{RAD_I32, {n}, true, std::vector<uint8_t>(static_cast<size_t>(n) * 4, 0xff)}},
                                n * d.vocab * 4));
    }
    // Qwen3-30B-A3B's experts (2048 wide, 128 of width 768, 8 picked); few rows take the card's
    // gemvs, many its grouped tiles (4 and 8 rows: where one path hands over to the other)
    const bool route = want({"moe_route"}), mlp = want({"moe_mlp"});
    if (!route && !mlp) {
    } else if (small) {
        moe(out, f, 512, 256, 16, 4, {1, 2, 24}, route, mlp);
        // ~300 rows an expert: the host chain's chunks of 256 and the card's many tiles an expert
        // (a chain that stopped after its first chunk failed here at 0.40)
        moe(out, f, 64, 32, 2, 1, {600}, route, mlp);
    } else
        moe(out, f, 2048, 768, 128, 8, {1, 2, 4, 8, 64, 256}, route, mlp);
    if (want({"sample"})) {
        sampling(out, f, d, 1);
        sampling(out, f, d, small ? 24 : 64);
    }
    if (!want({"attention", "rope_attention"})) return out;
    attention(out, f, d, 1, 1, small ? 200 : 1000);                // one decode row
    attention(out, f, d, 1, 1, small ? 150 : 250);                 // one decode row whose context one block takes (libgpu: no merge)
    attention(out, f, d, 1, 1, small ? 3000 : 5000);               // a long one: splits of several tiles each
    attention(out, f, d, 8, 1, small ? 100 : 700);                 // a decode batch
    attention(out, f, d, 1, small ? 64 : 256, small ? 300 : 512);  // a prefill chunk after a cached prefix
    attention(out, f, d, 1, small ? 40 : 64, small ? 120 : 160, small ? 12 : 256);  // a mixed step: decode rows and a chunk
    // rope_attention: one decode row (many splits: k_merge writes q and k back turned), one whose
    // context one block takes, a batch with one split a row (the attention kernel writes them
    // back), gptj pairs, and a prompt chunk (the chain)
    attention(out, f, d, 1, 1, small ? 200 : 1000, 0, "neox");
    attention(out, f, d, 1, 1, small ? 150 : 250, 0, "neox");  // one live split: the attention kernel writes them back
    attention(out, f, d, small ? 300 : 80, 1, small ? 40 : 64, 0, "neox");
    attention(out, f, d, 2, 1, small ? 90 : 300, 0, "gptj");
    attention(out, f, d, 1, small ? 32 : 128, small ? 100 : 256, 0, "neox");
    // an fp8 cache: a decode row, a batch, a prefill chunk after a prefix, a mixed step, rope_attention
    attention(out, f, d, 1, 1, small ? 200 : 1000, 0, nullptr, RAD_FP8_E4M3);
    attention(out, f, d, 8, 1, small ? 100 : 700, 0, nullptr, RAD_FP8_E4M3);
    attention(out, f, d, 1, small ? 64 : 256, small ? 300 : 512, 0, nullptr, RAD_FP8_E4M3);
    attention(out, f, d, 1, small ? 40 : 64, small ? 120 : 160, small ? 12 : 256, nullptr, RAD_FP8_E4M3);
    attention(out, f, d, 1, small ? 32 : 128, small ? 100 : 256, 0, "neox", RAD_FP8_E4M3);
    return out;
}

}  // namespace radiance::kbench
