// rad_block_attn.h: the attention block of a decoder layer, from the normed input to the output
// projection: fused qkv projection (+bias), optional per-head q/k RMS norms, rope, paged
// attention (causal, GQA, window, softcap), output projection.
#pragma once
#include <cmath>
#include <string>

#include "rad_block_kv.h"
#include "rad_block_linear.h"
#include "rad_block_rope.h"

namespace radblk {

struct AttnConfig {
    int layer = 0;
    int64_t n_embd = 0, n_head = 0, n_head_kv = 0, head_dim = 0;
    bool qkv_bias = false;
    bool qk_norm = false;  // Qwen3, Gemma3: RMS norm over each head of q and k
    bool qk_norm_unit_offset = false;
    double eps = 1e-6;
    int64_t window = 0;  // sliding window in tokens (0 = none)
    double softcap = 0.0;
    double scale = 0.0;  // 0: head_dim^-0.5
    Rope rope;
    int64_t max_tok = 0;
    int world = 1;          // tensor-parallel ranks: heads are split across them
    std::string hf_prefix;  // e.g. "model.layers.3.self_attn."
    // The checkpoint's own fused q|k|v weight under hf_prefix (Phi-3's "qkv_proj.weight"), rows
    // in q, k, v order; empty: separate q_proj, k_proj, v_proj concatenated by the name map.
    std::string fused_qkv;
    std::string name;       // e.g. "blk.3."
    // Decode-path fusions the model chose (it checked that a loaded library serves them): with
    // norm_w, `in` is the residual stream and the qkv projection norms it itself (rms_norm_gemm,
    // eps norm_eps); with residual_out the output projection adds into `out` (gemm_add), which
    // is then the residual stream (one rank only: a rank's product is a partial sum).
    rad_weight norm_w = RAD_NULL_HANDLE;
    double norm_eps = 1e-6;
    bool residual_out = false;
    // Rotate q and k inside the attention (rope_attention) where a loaded library serves it: a
    // card's decode attention turns them as it loads them, one launch a layer fewer.
    bool rope_in_attention = false;
    // Code dtypes the plugin reads quantised projections in (rad_block_linear.h); "" plain only.
    const char* quant_codes = "";
    // The KV group's dtype (rad_block_kv.h's kv_dtype(ctx)): passed as the attention's `kv_dtype`,
    // and with an fp8 cache the group's scale planes as its last two operands.
    int kv_dtype = RAD_F32;
};

// Buffers the block works in; declared once by the model and shared by its layers.
struct AttnBuffers {
    rad_buf in;    // [max_tok, n_embd], normed input
    rad_buf qkv;   // [max_tok, (n_head + 2 n_head_kv) head_dim]
    rad_buf attn;  // [max_tok, n_head head_dim]
    rad_buf out;   // [max_tok, n_embd]
};

struct AttnBlock {
    AttnConfig c;
    AttnBuffers bufs{};
    rad_kv kv = RAD_NULL_HANDLE;
    Linear qkv, o;  // the projections, plain or quantised
    rad_weight w_qkv = RAD_NULL_HANDLE, b_qkv = RAD_NULL_HANDLE, w_qn = RAD_NULL_HANDLE, w_kn = RAD_NULL_HANDLE, w_o = RAD_NULL_HANDLE;
    rad_op op_qkv = RAD_NULL_HANDLE, op_qn = RAD_NULL_HANDLE, op_kn = RAD_NULL_HANDLE, op_rq = RAD_NULL_HANDLE, op_attn = RAD_NULL_HANDLE,
           op_o = RAD_NULL_HANDLE, op_reduce = RAD_NULL_HANDLE;

    // This rank's heads and widths; the weights are declared at their full size and sliced by the core.
    int64_t heads() const { return c.n_head / c.world; }
    // Fewer kv heads than ranks: each rank keeps the one kv head its query heads read (replicated).
    int64_t kv_heads() const { return kv_share(c.n_head_kv, c.world); }
    static int64_t kv_share(int64_t n_head_kv, int world) { return n_head_kv >= world ? n_head_kv / world : 1; }
    int64_t q_width() const { return heads() * c.head_dim; }
    int64_t kv_width() const { return kv_heads() * c.head_dim; }

    // Checks the split before anything is declared.
    static bool divisible(const AttnConfig& cfg, std::string* why) {
        if (cfg.n_head % cfg.world == 0 && (cfg.n_head_kv % cfg.world == 0 || cfg.world % cfg.n_head_kv == 0)) return true;
        *why = std::to_string(cfg.n_head) + " query heads and " + std::to_string(cfg.n_head_kv) + " kv heads do not split over " +
               std::to_string(cfg.world) +
               " tensor-parallel ranks (query heads must divide evenly; kv heads must divide evenly or be replicated evenly)";
        return false;
    }

    void declare(RadBuilder* b, const AttnConfig& cfg, const AttnBuffers& buffers, rad_kv group) {
        c = cfg;
        bufs = buffers;
        kv = group;
        const std::string p = c.hf_prefix, n = c.name;
        const int64_t full_q = c.n_head * c.head_dim, full_kv = c.n_head_kv * c.head_dim;
        const int64_t qkv_rows = q_width() + 2 * kv_width();  // this rank's
        if (c.fused_qkv.empty())
            map(b, n + "attn_qkv.weight", RAD_MAP_CONCAT, {p + "q_proj.weight", p + "k_proj.weight", p + "v_proj.weight"});
        else
            map(b, n + "attn_qkv.weight", RAD_MAP_COPY, {p + c.fused_qkv});
        int64_t parts[3] = {full_q, full_kv, full_kv};  // copied by the builder at declare
        RadWeightDecl wq = weight(full_q + 2 * full_kv, c.n_embd, RAD_SHARD_ROW, c.layer);
        wq.n_row_parts = 3;
        wq.row_parts = parts;
        wq.row_unit = static_cast<int32_t>(c.head_dim);  // heads stay whole; kv heads replicate under wide TP
        if (!qkv.declare(b, n + "attn_qkv.weight", wq, c.quant_codes, c.world)) return;
        w_qkv = qkv.w;
        if (c.qkv_bias) {
            map(b, n + "attn_qkv.bias", RAD_MAP_CONCAT, {p + "q_proj.bias", p + "k_proj.bias", p + "v_proj.bias"});
            RadWeightDecl wb = weight(full_q + 2 * full_kv, 0, RAD_SHARD_ROW, c.layer);
            wb.n_row_parts = 3;
            wb.row_parts = parts;
            wb.row_unit = static_cast<int32_t>(c.head_dim);
            b_qkv = rad_decl_weight(b, (n + "attn_qkv.bias").c_str(), &wb);
            if (!require_plain(b, b_qkv, n + "attn_qkv.bias")) return;
        }
        if (c.norm_w != RAD_NULL_HANDLE) {
            if (qkv.quantised) rad_decl_fail(b, ("the norm folds into no quantised projection (" + n + "attn_qkv)").c_str());
            op_qkv = op(b, "rms_norm_gemm",
                        {RAD_RANGE("M", 1, c.max_tok), RAD_INT("N", qkv_rows), RAD_INT("K", c.n_embd), RAD_F64("eps", c.norm_eps),
                         RAD_STR("wdtype", wdtype(b, w_qkv))},
                        {c.norm_w, w_qkv});
            if (!rad_op_resolved(b, op_qkv)) rad_decl_fail(b, ("rms_norm_gemm does not resolve for " + n + "attn_qkv").c_str());
        } else {
            op_qkv = qkv.declare_op(b, c.max_tok, qkv_rows, c.n_embd);
        }
        uses(b, op_qkv, {bufs.in}, {bufs.qkv});
        if (c.qk_norm) {
            map(b, n + "attn_q_norm.weight", RAD_MAP_COPY, {p + "q_norm.weight"});
            map(b, n + "attn_k_norm.weight", RAD_MAP_COPY, {p + "k_norm.weight"});
            RadWeightDecl wn = weight(c.head_dim, 0, RAD_SHARD_NONE, c.layer);
            w_qn = rad_decl_weight(b, (n + "attn_q_norm.weight").c_str(), &wn);
            w_kn = rad_decl_weight(b, (n + "attn_k_norm.weight").c_str(), &wn);
            if (!require_plain(b, w_qn, n + "attn_q_norm.weight") || !require_plain(b, w_kn, n + "attn_k_norm.weight")) return;
            op_qn = norm_op(b, heads(), w_qn);
            op_kn = norm_op(b, kv_heads(), w_kn);
            uses(b, op_qn, {bufs.qkv}, {bufs.qkv});
            uses(b, op_kn, {bufs.qkv}, {bufs.qkv});
        }
        const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.head_dim));
        std::vector<RadParamDecl> ap = {RAD_RANGE("n", 1, c.max_tok), RAD_INT("n_head", heads()), RAD_INT("n_head_kv", kv_heads()),
                                        RAD_INT("head_dim", c.head_dim), RAD_F64("scale", scale)};
        if (c.window > 0) ap.push_back(RAD_INT("window", c.window));
        if (c.softcap > 0) ap.push_back(RAD_F64("softcap", c.softcap));
        ap.push_back(kv_dtype_param(c.kv_dtype));
        op_rq = op_attn = RAD_NULL_HANDLE;
        if (c.rope_in_attention) {
            std::vector<RadParamDecl> rp = ap;
            c.rope.append_rotation(rp);
            op_attn = rad_decl_op(b, "rope_attention", rp.data(), static_cast<int>(rp.size()), nullptr, 0);
            if (!rad_op_resolved(b, op_attn)) op_attn = RAD_NULL_HANDLE;  // (an unresolved op is never issued)
        }
        if (op_attn != RAD_NULL_HANDLE) {
            uses(b, op_attn, {bufs.qkv}, {bufs.qkv, bufs.attn});  // q and k turned in place
        } else {
            // q and k heads sit side by side in qkv and rotate by the same angles: one launch turns both.
            op_rq = c.rope.declare_op(b, c.max_tok, heads() + kv_heads(), c.head_dim);
            uses(b, op_rq, {bufs.qkv}, {bufs.qkv});
            op_attn = rad_decl_op(b, "attention", ap.data(), static_cast<int>(ap.size()), nullptr, 0);
            uses(b, op_attn, {bufs.qkv}, {bufs.attn});
        }
        rad_bind_layer_kv(b, kv, c.layer);
        map(b, n + "attn_output.weight", RAD_MAP_COPY, {p + "o_proj.weight"});
        RadWeightDecl wo = weight(c.n_embd, full_q, RAD_SHARD_COL, c.layer);
        if (!o.declare(b, n + "attn_output.weight", wo, c.quant_codes, c.world)) return;
        w_o = o.w;
        op_o = out_projection(b, c.residual_out, c.max_tok, c.n_embd, q_width(), o, bufs.attn, bufs.out, n + "attn_output");
        if (c.world > 1) {  // each rank holds a partial sum of the output projection
            op_reduce = op(b, "all_reduce", {RAD_RANGE("n", 1, c.max_tok), RAD_INT("dim", c.n_embd)});
            uses(b, op_reduce, {bufs.out}, {bufs.out});
        }
    }

    void step(RadCtx* ctx, const RadBatch* bt) const {
        const int64_t n = bt->n_tok;
        const int64_t qw = q_width(), kw = kv_width();
        if (c.norm_w != RAD_NULL_HANDLE)
            RAD_ISSUE_N(ctx, op_qkv, n, rad_brows(bufs.in, n), rad_w(c.norm_w), rad_w(w_qkv), b_qkv >= 0 ? rad_w(b_qkv) : rad_none(),
                        rad_brows(bufs.qkv, n));
        else
            qkv.issue(ctx, op_qkv, n, rad_brows(bufs.in, n), b_qkv >= 0 ? rad_w(b_qkv) : rad_none(), rad_brows(bufs.qkv, n));
        if (c.qk_norm) {
            RAD_ISSUE_N(ctx, op_qn, n, rad_bview(bufs.qkv, n, 0, qw), rad_w(w_qn), rad_bview(bufs.qkv, n, 0, qw));
            RAD_ISSUE_N(ctx, op_kn, n, rad_bview(bufs.qkv, n, qw, kw), rad_w(w_kn), rad_bview(bufs.qkv, n, qw, kw));
        }
        if (op_rq != RAD_NULL_HANDLE && c.rope.per_sequence())  // longrope: each row's factors by its sequence
            RAD_ISSUE_N(ctx, op_rq, n, rad_bview(bufs.qkv, n, 0, qw + kw), rad_raw(bt->positions, RAD_I32, n),
                        rad_raw(bt->cu_seqlens, RAD_I32, bt->n_seq + 1));
        else if (op_rq != RAD_NULL_HANDLE)
            RAD_ISSUE_N(ctx, op_rq, n, rad_bview(bufs.qkv, n, 0, qw + kw), rad_raw(bt->positions, RAD_I32, n));
        RAD_ISSUE_N(ctx, op_attn, n, rad_bview(bufs.qkv, n, 0, qw), rad_bview(bufs.qkv, n, qw, kw), rad_bview(bufs.qkv, n, qw + kw, kw),
                    rad_kvref(kv, c.layer, 0), rad_kvref(kv, c.layer, 1), rad_raw(bt->positions, RAD_I32, n),
                    rad_raw(bt->cu_seqlens, RAD_I32, bt->n_seq + 1), rad_raw2(bt->block_tables, RAD_I32, bt->n_seq, bt->block_table_stride),
                    rad_brows(bufs.attn, n), kv_scale_ref(kv, c.layer, c.kv_dtype, 0), kv_scale_ref(kv, c.layer, c.kv_dtype, 1));
        o.issue(ctx, op_o, n, rad_brows(bufs.attn, n), rad_none(), rad_brows(bufs.out, n));
        if (op_reduce != RAD_NULL_HANDLE) RAD_ISSUE_N(ctx, op_reduce, n, rad_brows(bufs.out, n));
    }

private:
    rad_op norm_op(RadBuilder* b, int64_t groups, rad_weight w) const {
        return op(b, "rms_norm",
                  {RAD_RANGE("n", 1, c.max_tok), RAD_INT("dim", c.head_dim), RAD_INT("groups", groups), RAD_F64("eps", c.eps),
                   RAD_INT("unit_offset", c.qk_norm_unit_offset ? 1 : 0), RAD_STR("wdtype", wdtype(b, w))},
                  {w});
    }
};

}  // namespace radblk
