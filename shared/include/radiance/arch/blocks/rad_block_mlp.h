// rad_block_mlp.h: the gated MLP of a decoder layer: fused [gate|up] projection, SwiGLU or GeGLU,
// down projection.
#pragma once
#include <string>

#include "rad_block_linear.h"

namespace radblk {

struct MlpConfig {
    int layer = 0;
    int64_t n_embd = 0, n_ff = 0, max_tok = 0;  // n_ff is the full width
    int world = 1, rank = 0;
    const char* act = "swiglu";  // or "geglu"
    std::string hf_prefix;       // e.g. "model.layers.3.mlp."
    std::string name;            // e.g. "blk.3."
    // The checkpoint's own fused [gate|up] weight under hf_prefix (Phi-3's "gate_up_proj.weight"),
    // gate rows first; empty: gate_proj and up_proj concatenated by the name map.
    std::string fused_gate_up;
    // Decode-path fusions, as AttnConfig's: with norm_w (swiglu only) the [gate|up] projection
    // norms the residual stream `in` itself (rms_norm_gemm_swiglu); with residual_out the down
    // projection adds into `out` (gemm_add).
    rad_weight norm_w = RAD_NULL_HANDLE;
    double norm_eps = 1e-6;
    bool residual_out = false;
    // Code dtypes the plugin reads quantised projections in (rad_block_linear.h); "" plain only.
    const char* quant_codes = "";
};

struct MlpBuffers {
    rad_buf in;   // [max_tok, n_embd]
    rad_buf gu;   // [max_tok, 2 n_ff]
    rad_buf act;  // [max_tok, n_ff]
    rad_buf out;  // [max_tok, n_embd]
};

struct MlpBlock {
    MlpConfig c;
    MlpBuffers bufs{};
    Linear gu, down;  // the projections, plain or quantised
    rad_weight w_gu = RAD_NULL_HANDLE, w_down = RAD_NULL_HANDLE;
    rad_op op_gu = RAD_NULL_HANDLE, op_act = RAD_NULL_HANDLE, op_down = RAD_NULL_HANDLE, op_reduce = RAD_NULL_HANDLE;
    rad_op op_gu_act = RAD_NULL_HANDLE;  // gemm_swiglu: the projection and its activation in one op

    // This rank's share of the hidden width: the core's span [r P / W, (r + 1) P / W), so a width
    // that does not divide gives uneven shares.
    static int64_t share(int64_t P, int rank, int world) { return (rank + 1) * P / world - rank * P / world; }
    int64_t ff() const { return share(c.n_ff, c.rank, c.world); }

    void declare(RadBuilder* b, const MlpConfig& cfg, const MlpBuffers& buffers) {
        c = cfg;
        bufs = buffers;
        const std::string p = c.hf_prefix, n = c.name;
        if (c.fused_gate_up.empty())
            map(b, n + "ffn_gate_up.weight", RAD_MAP_CONCAT, {p + "gate_proj.weight", p + "up_proj.weight"});
        else
            map(b, n + "ffn_gate_up.weight", RAD_MAP_COPY, {p + c.fused_gate_up});
        int64_t parts[2] = {c.n_ff, c.n_ff};  // a rank owns a slice of gate and of up, never of the stack
        RadWeightDecl wg = weight(2 * c.n_ff, c.n_embd, RAD_SHARD_ROW, c.layer);
        wg.n_row_parts = 2;
        wg.row_parts = parts;
        if (!gu.declare(b, n + "ffn_gate_up.weight", wg, c.quant_codes, c.world)) return;
        w_gu = gu.w;
        map(b, n + "ffn_down.weight", RAD_MAP_COPY, {p + "down_proj.weight"});
        RadWeightDecl wd = weight(c.n_embd, c.n_ff, RAD_SHARD_COL, c.layer);
        if (!down.declare(b, n + "ffn_down.weight", wd, c.quant_codes, c.world)) return;
        w_down = down.w;
        // SwiGLU fused into its projection where a loaded library serves it (one launch, and the
        // [gate|up] product never leaves the kernel on a card); the pair otherwise.
        if (c.norm_w != RAD_NULL_HANDLE) {
            if (gu.quantised) rad_decl_fail(b, ("the norm folds into no quantised projection (" + n + "ffn_gate_up)").c_str());
            op_gu_act = op(b, "rms_norm_gemm_swiglu",
                           {RAD_RANGE("M", 1, c.max_tok), RAD_INT("N", ff()), RAD_INT("K", c.n_embd), RAD_F64("eps", c.norm_eps),
                            RAD_STR("wdtype", wdtype(b, w_gu))},
                           {c.norm_w, w_gu});
            if (std::string(c.act) != "swiglu" || !rad_op_resolved(b, op_gu_act))
                rad_decl_fail(b, ("rms_norm_gemm_swiglu does not resolve for " + n + "ffn_gate_up").c_str());
            uses(b, op_gu_act, {bufs.in}, {bufs.act});
        } else if (std::string(c.act) == "swiglu" && !gu.quantised) {
            op_gu_act =
                op(b, "gemm_swiglu",
                   {RAD_RANGE("M", 1, c.max_tok), RAD_INT("N", ff()), RAD_INT("K", c.n_embd), RAD_STR("wdtype", wdtype(b, w_gu))}, {w_gu});
            if (rad_op_resolved(b, op_gu_act))
                uses(b, op_gu_act, {bufs.in}, {bufs.act});
            else
                op_gu_act = RAD_NULL_HANDLE;
        }
        if (op_gu_act == RAD_NULL_HANDLE) {
            op_gu = gu.declare_op(b, c.max_tok, 2 * ff(), c.n_embd);
            uses(b, op_gu, {bufs.in}, {bufs.gu});
            op_act = op(b, c.act, {RAD_RANGE("n", 1, c.max_tok), RAD_INT("dim", ff())});
            uses(b, op_act, {bufs.gu}, {bufs.act});
        }
        op_down = out_projection(b, c.residual_out, c.max_tok, c.n_embd, ff(), down, bufs.act, bufs.out, n + "ffn_down");
        if (c.world > 1) {
            op_reduce = op(b, "all_reduce", {RAD_RANGE("n", 1, c.max_tok), RAD_INT("dim", c.n_embd)});
            uses(b, op_reduce, {bufs.out}, {bufs.out});
        }
    }

    void step(RadCtx* ctx, const RadBatch* bt) const {
        const int64_t n = bt->n_tok;
        if (c.norm_w != RAD_NULL_HANDLE) {
            RAD_ISSUE_N(ctx, op_gu_act, n, rad_brows(bufs.in, n), rad_w(c.norm_w), rad_w(w_gu), rad_brows(bufs.act, n));
        } else if (op_gu_act != RAD_NULL_HANDLE) {
            RAD_ISSUE_N(ctx, op_gu_act, n, rad_brows(bufs.in, n), rad_w(w_gu), rad_brows(bufs.act, n));
        } else {
            gu.issue(ctx, op_gu, n, rad_brows(bufs.in, n), rad_none(), rad_brows(bufs.gu, n));
            RAD_ISSUE_N(ctx, op_act, n, rad_brows(bufs.gu, n), rad_brows(bufs.act, n));
        }
        down.issue(ctx, op_down, n, rad_brows(bufs.act, n), rad_none(), rad_brows(bufs.out, n));
        if (op_reduce != RAD_NULL_HANDLE) RAD_ISSUE_N(ctx, op_reduce, n, rad_brows(bufs.out, n));
    }
};

}  // namespace radblk
