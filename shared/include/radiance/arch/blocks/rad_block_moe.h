// rad_block_moe.h: a mixture-of-experts MLP: the router's projection, moe_route (softmax top-k,
// renormalised or not) and moe_mlp over the experts' weights stacked by expert (docs/OPS.md);
// optionally Qwen2-MoE's shared expert, a dense MLP every token runs, joining the routed sum
// through a one-output sigmoid gate (gated_add).
#pragma once
#include <string>
#include <vector>

#include "rad_block_mlp.h"
#include "rad_block_util.h"

namespace radblk {

// How a checkpoint names one expert's three projections (Mixtral: w1 / w3 / w2; Qwen-MoE:
// gate_proj / up_proj / down_proj) and the router ("gate").
struct ExpertNames {
    std::string gate = "gate_proj", up = "up_proj", down = "down_proj", router = "gate";
};

struct MoeConfig {
    int layer = 0;
    int64_t n_embd = 0, n_ff = 0, max_tok = 0;  // n_ff: one expert's full hidden width
    int64_t n_expert = 0, n_used = 0;           // experts, and experts a token picks
    bool norm_topk = true;                      // renormalise the picked weights over the k
    int world = 1, rank = 0;
    std::string hf_prefix;  // e.g. "model.layers.3.mlp." (the experts are under "experts.<e>.")
    std::string name;       // e.g. "blk.3."
    ExpertNames names;
    int64_t n_shared_ff = 0;  // > 0: a shared expert of this full width ("shared_expert." under hf_prefix)
};

struct MoeBuffers {
    rad_buf in;      // [max_tok, n_embd]
    rad_buf logits;  // [max_tok, n_expert], the router's output
    rad_buf ids;     // [max_tok, n_used] i32
    rad_buf w;       // [max_tok, n_used] f32
    rad_buf out;     // [max_tok, n_embd]
    // with a shared expert: its [gate|up], activation and output, and its gate ([max_tok, 1])
    rad_buf shared_gu = RAD_NULL_HANDLE, shared_act = RAD_NULL_HANDLE, shared_out = RAD_NULL_HANDLE, shared_g = RAD_NULL_HANDLE;
};

struct MoeBlock {
    MoeConfig c;
    MoeBuffers bufs{};
    rad_weight w_router = RAD_NULL_HANDLE, w_gu = RAD_NULL_HANDLE, w_down = RAD_NULL_HANDLE;
    rad_op op_router = RAD_NULL_HANDLE, op_route = RAD_NULL_HANDLE, op_experts = RAD_NULL_HANDLE, op_reduce = RAD_NULL_HANDLE;
    MlpBlock shared;
    rad_weight w_shared_gate = RAD_NULL_HANDLE;
    rad_op op_shared_gate = RAD_NULL_HANDLE, op_join = RAD_NULL_HANDLE;

    int64_t ff() const { return MlpBlock::share(c.n_ff, c.rank, c.world); }

    // The declaration's dimensions are usable; else why not, for rad_decl_fail.
    static bool valid(const MoeConfig& c, std::string* why) {
        if (c.n_expert <= 0 || c.n_used <= 0 || c.n_used > c.n_expert || c.n_ff <= 0) {
            *why = "a mixture-of-experts layer needs 0 < num_experts_per_tok <= experts and an expert width (got " +
                   std::to_string(c.n_used) + " of " + std::to_string(c.n_expert) + " experts, width " + std::to_string(c.n_ff) + ")";
            return false;
        }
        return true;
    }

    void declare(RadBuilder* b, const MoeConfig& cfg, const MoeBuffers& buffers) {
        c = cfg;
        bufs = buffers;
        const std::string p = c.hf_prefix, n = c.name;
        map(b, n + "ffn_gate_inp.weight", RAD_MAP_COPY, {p + c.names.router + ".weight"});
        // The router in f32 (exact widening of a 16-bit checkpoint, E x d floats a layer): a card
        // narrows x to the weight's type for its many-row products, and a top-k pick near a tie
        // flips on that rounding (three card goldens failed so, H100, 2026-12-06).
        RadWeightDecl wr = weight(c.n_expert, c.n_embd, RAD_SHARD_NONE, c.layer);
        wr.dtype = RAD_F32;
        w_router = rad_decl_weight(b, (n + "ffn_gate_inp.weight").c_str(), &wr);
        // Every expert's [gate | up] rows, expert after expert; a rank owns a slice of each part.
        std::vector<std::string> gu_src, down_src;
        for (int64_t e = 0; e < c.n_expert; ++e) {
            const std::string x = p + "experts." + std::to_string(e) + ".";
            gu_src.push_back(x + c.names.gate + ".weight");
            gu_src.push_back(x + c.names.up + ".weight");
            down_src.push_back(x + c.names.down + ".weight");
        }
        // transformers 5 may store every expert fused, [E, 2F, d] and [E, d, F] (flattened to the
        // stacks on conversion); else one tensor an expert and projection (last: the alternative a
        // missing tensor is reported against)
        map(b, n + "ffn_gate_up_exps.weight", RAD_MAP_COPY, {p + "experts.gate_up_proj"});
        map(b, n + "ffn_gate_up_exps.weight", RAD_MAP_CONCAT, gu_src);
        std::vector<int64_t> parts(static_cast<size_t>(2 * c.n_expert), c.n_ff);
        RadWeightDecl wg = weight(2 * c.n_expert * c.n_ff, c.n_embd, RAD_SHARD_ROW, c.layer, RAD_ACCESS_CONDITIONAL);
        wg.n_row_parts = static_cast<int32_t>(parts.size());
        wg.row_parts = parts.data();
        w_gu = rad_decl_weight(b, (n + "ffn_gate_up_exps.weight").c_str(), &wg);
        map(b, n + "ffn_down_exps.weight", RAD_MAP_COPY, {p + "experts.down_proj"});
        map(b, n + "ffn_down_exps.weight", RAD_MAP_CONCAT, down_src);
        RadWeightDecl wd = weight(c.n_expert * c.n_embd, c.n_ff, RAD_SHARD_COL, c.layer, RAD_ACCESS_CONDITIONAL);
        w_down = rad_decl_weight(b, (n + "ffn_down_exps.weight").c_str(), &wd);

        op_router =
            op(b, "gemm",
               {RAD_RANGE("M", 1, c.max_tok), RAD_INT("N", c.n_expert), RAD_INT("K", c.n_embd), RAD_STR("wdtype", "f32")},
               {w_router});
        uses(b, op_router, {bufs.in}, {bufs.logits});
        op_route = op(b, "moe_route",
                      {RAD_RANGE("n", 1, c.max_tok), RAD_INT("experts", c.n_expert), RAD_INT("k", c.n_used), RAD_INT("norm", c.norm_topk)});
        uses(b, op_route, {bufs.logits}, {bufs.ids, bufs.w});
        op_experts = op(b, "moe_mlp",
                        {RAD_RANGE("n", 1, c.max_tok), RAD_INT("dim", c.n_embd), RAD_INT("ff", ff()), RAD_INT("experts", c.n_expert),
                         RAD_INT("k", c.n_used), RAD_STR("wdtype", wdtype(b, w_gu))},
                        {w_gu, w_down});
        uses(b, op_experts, {bufs.in, bufs.ids, bufs.w}, {bufs.out});
        if (c.world > 1) {  // each rank summed its slice of every expert's width
            op_reduce = op(b, "all_reduce", {RAD_RANGE("n", 1, c.max_tok), RAD_INT("dim", c.n_embd)});
            uses(b, op_reduce, {bufs.out}, {bufs.out});
        }
        if (c.n_shared_ff > 0) declare_shared(b);
    }

    // out += sigmoid(gate . in) * shared_mlp(in), after the routed sum (transformers' order).
    void declare_shared(RadBuilder* b) {
        MlpConfig sc;
        sc.layer = c.layer;
        sc.n_embd = c.n_embd;
        sc.n_ff = c.n_shared_ff;
        sc.max_tok = c.max_tok;
        sc.world = c.world;
        sc.rank = c.rank;
        sc.hf_prefix = c.hf_prefix + "shared_expert.";
        sc.name = c.name + "shexp.";
        shared.declare(b, sc, MlpBuffers{bufs.in, bufs.shared_gu, bufs.shared_act, bufs.shared_out});
        const std::string n = c.name + "ffn_gate_inp_shexp.weight";
        map(b, n, RAD_MAP_COPY, {c.hf_prefix + "shared_expert_gate.weight"});
        RadWeightDecl wg = weight(1, c.n_embd, RAD_SHARD_NONE, c.layer);
        wg.dtype = RAD_F32;  // as the router: x stays f32 on every path
        w_shared_gate = rad_decl_weight(b, n.c_str(), &wg);
        op_shared_gate = op(
            b, "gemm", {RAD_RANGE("M", 1, c.max_tok), RAD_INT("N", 1), RAD_INT("K", c.n_embd), RAD_STR("wdtype", "f32")},
            {w_shared_gate});
        uses(b, op_shared_gate, {bufs.in}, {bufs.shared_g});
        op_join = op(b, "gated_add", {RAD_RANGE("n", 1, c.max_tok), RAD_INT("dim", c.n_embd)});
        uses(b, op_join, {bufs.shared_out, bufs.shared_g, bufs.out}, {bufs.out});
    }

    void step(RadCtx* ctx, const RadBatch* bt) const {
        const int64_t n = bt->n_tok;
        RAD_ISSUE_N(ctx, op_router, n, rad_brows(bufs.in, n), rad_w(w_router), rad_none(), rad_brows(bufs.logits, n));
        RAD_ISSUE_N(ctx, op_route, n, rad_brows(bufs.logits, n), rad_brows(bufs.ids, n), rad_brows(bufs.w, n));
        RAD_ISSUE_N(ctx, op_experts, n, rad_brows(bufs.in, n), rad_brows(bufs.ids, n), rad_brows(bufs.w, n), rad_w(w_gu), rad_w(w_down),
                    rad_brows(bufs.out, n));
        if (op_reduce != RAD_NULL_HANDLE) RAD_ISSUE_N(ctx, op_reduce, n, rad_brows(bufs.out, n));
        if (c.n_shared_ff <= 0) return;
        shared.step(ctx, bt);
        RAD_ISSUE_N(ctx, op_shared_gate, n, rad_brows(bufs.in, n), rad_w(w_shared_gate), rad_none(), rad_brows(bufs.shared_g, n));
        RAD_ISSUE_N(ctx, op_join, n, rad_brows(bufs.shared_out, n), rad_brows(bufs.shared_g, n), rad_brows(bufs.out, n));
    }
};

}  // namespace radblk
