// GPT-2: learned absolute positions added to the token embeddings, pre-norm layers with
// LayerNorm (weight and bias), attention without rotation (scale head_dim^-0.5), a plain MLP
// (c_fc, GELU tanh, c_proj), every projection with a bias, a final LayerNorm and a head tied to the
// token embeddings. Its projections are Conv1D, stored [in, out]: the name map transposes them
// into the [out, in] rows every gemm reads (c_attn's columns are [q | k | v], so its transpose is
// the stacked qkv rows the attention block of the llama family uses). Built once unquantised and
// once per quant descriptor (CMakeLists.txt): the four projections are read at the container's
// encoding (Linear: gemm_q over the planes, with their biases, where the build's ARCH_CODES reads
// them); embeddings, LayerNorms and biases stay plain.
#include <radiance/arch/blocks/rad_block_kv.h>
#include <radiance/arch/blocks/rad_block_linear.h>
#include <radiance/arch/blocks/rad_block_quant.h>

#include <cmath>
#include <string>
#include <vector>

namespace gpt2 {

using namespace radblk;

struct Layer {
    rad_weight ln1_w, ln1_b, ln2_w, ln2_b, b_qkv, b_o, b_fc, b_proj;
    Linear qkv, o, fc, proj;  // the projections, plain or quantised
    rad_op op_ln1, op_qkv, op_attn, op_o, op_reduce_o = RAD_NULL_HANDLE, op_add_attn, op_ln2, op_fc, op_gelu, op_proj,
                                          op_reduce_mlp = RAD_NULL_HANDLE, op_add_mlp;
};

struct Model {
    int64_t n_embd = 0, n_vocab = 0, n_pos = 0, max_tok = 0, max_out = 0, hd = 0, heads = 0, ff = 0;
    double eps = 1e-5;
    int world = 1, rank = 0;
    rad_weight w_tok, w_pos, lnf_w, lnf_b;
    Linear head;  // a view of the token embeddings (GPT-2 ties them)
    rad_buf b_x, b_h, b_tmp, b_qkv, b_attn, b_fc, b_xo, b_logits;
    rad_kv kv = RAD_NULL_HANDLE;
    int kv_dtype = RAD_F32;  // the cache's (rad_block_kv.h)
    rad_op op_embed, op_pos, op_add_pos, op_gather, op_lnf, op_head;
    std::vector<Layer> layers;
};

Model m;

// The declaration of a weight from one checkpoint tensor, its name mapped; `parts` (with `unit`,
// rows a part splits in) describes what a row-split weight stacks.
RadWeightDecl mapped(RadBuilder* b, const std::string& name, int map_kind, const std::string& source, int64_t rows, int64_t cols, int shard,
                     int group, const int64_t* parts = nullptr, int n_parts = 0, int64_t unit = 0) {
    map(b, name, map_kind, {source});
    RadWeightDecl d = weight(rows, cols, shard, group);
    d.n_row_parts = n_parts;
    d.row_parts = parts;
    d.row_unit = static_cast<int32_t>(unit);
    return d;
}

// A weight read plain (an embedding, a LayerNorm's weight or bias, a projection's bias): one whose
// container stores it otherwise is refused by name (the declaration has failed).
template <class... A>
rad_weight decl(RadBuilder* b, const std::string& name, A... a) {
    RadWeightDecl d = mapped(b, name, a...);
    const rad_weight w = rad_decl_weight(b, name.c_str(), &d);
    require_plain(b, w, name);
    return w;
}

// A projection, at the container's encoding: the code dtypes this build reads (ARCH_CODES), else
// refused by name.
void linear(RadBuilder* b, int world, Linear& lin, const std::string& name, int map_kind, const std::string& source, int64_t rows,
            int64_t cols, int shard, int group, const int64_t* parts = nullptr, int n_parts = 0, int64_t unit = 0) {
    lin.declare(b, name, mapped(b, name, map_kind, source, rows, cols, shard, group, parts, n_parts, unit), ARCH_CODES, world);
}

rad_op layer_norm(RadBuilder* b, rad_weight w, int64_t rows) {
    return op(b, "layer_norm", {RAD_RANGE("n", 1, rows), RAD_INT("dim", m.n_embd), RAD_F64("eps", m.eps), RAD_STR("wdtype", wdtype(b, w))},
              {w});
}

rad_op add(RadBuilder* b, rad_buf x, rad_buf r) {
    rad_op h = op(b, "add", {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd)});
    uses(b, h, {x, r}, {x});
    return h;
}

rad_op all_reduce(RadBuilder* b, rad_buf x) {
    if (m.world <= 1) return RAD_NULL_HANDLE;
    rad_op h = op(b, "all_reduce", {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd)});
    uses(b, h, {x}, {x});
    return h;
}

int declare(RadBuilder* b, const RadModelMeta* meta, const RadBuildCtx* ctx) {
    m = Model{};
    if (meta->n_layers <= 0 || meta->n_embd <= 0 || meta->n_head <= 0 || meta->head_dim <= 0 || meta->n_vocab <= 0) {
        rad_decl_fail(b, "metadata lacks the model's dimensions (n_layers, n_embd, n_head, head_dim, n_vocab)");
        return RAD_E_ARG;
    }
    const std::string act_fn = rad_meta_gets(meta, "hf.activation_function", "gelu_new");
    if (act_fn != "gelu_new" && act_fn != "gelu_pytorch_tanh") {
        rad_decl_fail(b, ("activation_function = " + act_fn + " is not served (GELU tanh only)").c_str());
        return RAD_E_UNSUPPORTED;
    }
    for (const char* key : {"hf.scale_attn_by_inverse_layer_idx", "hf.reorder_and_upcast_attn"})
        if (meta_true(meta, key)) {
            rad_decl_fail(b, (std::string(key + 3) + " = true is not served").c_str());
            return RAD_E_UNSUPPORTED;
        }
    if (rad_meta_geti(meta, "hf.scale_attn_weights", 1) == 0) {
        rad_decl_fail(b, "scale_attn_weights = false is not served");
        return RAD_E_UNSUPPORTED;
    }
    m.n_embd = meta->n_embd;
    m.n_vocab = meta->n_vocab;
    m.n_pos = meta->n_ctx_train > 0 ? meta->n_ctx_train : 1024;
    m.max_tok = ctx->max_tok;
    m.max_out = ctx->max_out_rows > 0 ? ctx->max_out_rows : ctx->max_seqs;
    m.eps = meta->rms_eps > 0 ? meta->rms_eps : 1e-5;
    m.world = ctx->world_size > 0 ? ctx->world_size : 1;
    m.rank = ctx->rank;
    m.hd = meta->head_dim;
    m.ff = meta->n_ff > 0 ? meta->n_ff : 4 * m.n_embd;  // n_inner, else 4 n_embd
    if (meta->n_head % m.world != 0) {
        rad_decl_fail(
            b, (std::to_string(meta->n_head) + " heads do not split over " + std::to_string(m.world) + " tensor-parallel ranks").c_str());
        return RAD_E_SHAPE;
    }
    if (ctx->max_ctx > m.n_pos) {  // a position past the table has no embedding
        rad_decl_fail(b, ("a context of " + std::to_string(ctx->max_ctx) + " tokens is past GPT-2's " + std::to_string(m.n_pos) +
                          " learned positions (n_positions); serve it with --max-ctx " + std::to_string(m.n_pos) + " or less")
                             .c_str());
        return RAD_E_ARG;
    }
    m.heads = meta->n_head / m.world;
    const int64_t d = m.n_embd, q_w = m.heads * m.hd, ff_l = (m.rank + 1) * m.ff / m.world - m.rank * m.ff / m.world;
    const int act = ctx->act_dtype ? ctx->act_dtype : RAD_F32;

    map(b, "token_embd.weight", RAD_MAP_COPY, {"transformer.wte.weight", "wte.weight"});
    RadWeightDecl we = weight(m.n_vocab, d, RAD_SHARD_NONE, -1, RAD_ACCESS_VOCAB);
    m.w_tok = rad_decl_weight(b, "token_embd.weight", &we);
    map(b, "position_embd.weight", RAD_MAP_COPY, {"transformer.wpe.weight", "wpe.weight"});
    RadWeightDecl wp = weight(m.n_pos, d, RAD_SHARD_NONE, -1, RAD_ACCESS_VOCAB);
    m.w_pos = rad_decl_weight(b, "position_embd.weight", &wp);
    // embed gathers plain rows only (a recipe keeps both tables plain)
    if (!require_plain(b, m.w_tok, "token_embd.weight") || !require_plain(b, m.w_pos, "position_embd.weight")) return RAD_E_UNSUPPORTED;

    RadBufDecl bd = buf2(act, m.max_tok, d);
    m.b_x = rad_decl_buffer(b, "x", &bd);
    m.b_h = rad_decl_buffer(b, "h", &bd);
    m.b_tmp = rad_decl_buffer(b, "tmp", &bd);
    bd = buf2(act, m.max_tok, 3 * q_w);
    m.b_qkv = rad_decl_buffer(b, "qkv", &bd);
    bd = buf2(act, m.max_tok, q_w);
    m.b_attn = rad_decl_buffer(b, "attn", &bd);
    bd = buf2(act, m.max_tok, ff_l);
    m.b_fc = rad_decl_buffer(b, "fc", &bd);

    m.kv = decl_attn_kv(b, "attn", ctx, m.heads, m.hd);
    m.kv_dtype = kv_dtype(ctx);

    // x = wte[id] + wpe[position]
    m.op_embed = op(b, "embed",
                    {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", d), RAD_INT("vocab", m.n_vocab), RAD_STR("wdtype", wdtype(b, m.w_tok))},
                    {m.w_tok});
    uses(b, m.op_embed, {}, {m.b_x});
    m.op_pos =
        op(b, "embed", {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", d), RAD_INT("vocab", m.n_pos), RAD_STR("wdtype", wdtype(b, m.w_pos))},
           {m.w_pos});
    uses(b, m.op_pos, {}, {m.b_tmp});
    m.op_add_pos = add(b, m.b_x, m.b_tmp);

    const int64_t qkv_parts[3] = {d, d, d}, ff_parts[1] = {m.ff};
    m.layers.resize(static_cast<size_t>(meta->n_layers));
    for (int l = 0; l < meta->n_layers; ++l) {
        Layer& L = m.layers[l];
        const std::string hf = "transformer.h." + std::to_string(l) + ".", n = "blk." + std::to_string(l) + ".";
        L.ln1_w = decl(b, n + "attn_norm.weight", RAD_MAP_COPY, hf + "ln_1.weight", d, 0, RAD_SHARD_NONE, l);
        L.ln1_b = decl(b, n + "attn_norm.bias", RAD_MAP_COPY, hf + "ln_1.bias", d, 0, RAD_SHARD_NONE, l);
        linear(b, m.world, L.qkv, n + "attn_qkv.weight", RAD_MAP_TRANSPOSE, hf + "attn.c_attn.weight", 3 * d, d, RAD_SHARD_ROW, l,
               qkv_parts, 3, m.hd);
        L.b_qkv = decl(b, n + "attn_qkv.bias", RAD_MAP_COPY, hf + "attn.c_attn.bias", 3 * d, 0, RAD_SHARD_ROW, l, qkv_parts, 3, m.hd);
        linear(b, m.world, L.o, n + "attn_output.weight", RAD_MAP_TRANSPOSE, hf + "attn.c_proj.weight", d, d, RAD_SHARD_COL, l);
        L.b_o = decl(b, n + "attn_output.bias", RAD_MAP_COPY, hf + "attn.c_proj.bias", d, 0, RAD_SHARD_NONE, l);
        L.ln2_w = decl(b, n + "ffn_norm.weight", RAD_MAP_COPY, hf + "ln_2.weight", d, 0, RAD_SHARD_NONE, l);
        L.ln2_b = decl(b, n + "ffn_norm.bias", RAD_MAP_COPY, hf + "ln_2.bias", d, 0, RAD_SHARD_NONE, l);
        linear(b, m.world, L.fc, n + "ffn_up.weight", RAD_MAP_TRANSPOSE, hf + "mlp.c_fc.weight", m.ff, d, RAD_SHARD_ROW, l, ff_parts, 1);
        L.b_fc = decl(b, n + "ffn_up.bias", RAD_MAP_COPY, hf + "mlp.c_fc.bias", m.ff, 0, RAD_SHARD_ROW, l, ff_parts, 1);
        linear(b, m.world, L.proj, n + "ffn_down.weight", RAD_MAP_TRANSPOSE, hf + "mlp.c_proj.weight", d, m.ff, RAD_SHARD_COL, l);
        L.b_proj = decl(b, n + "ffn_down.bias", RAD_MAP_COPY, hf + "mlp.c_proj.bias", d, 0, RAD_SHARD_NONE, l);

        L.op_ln1 = layer_norm(b, L.ln1_w, m.max_tok);
        uses(b, L.op_ln1, {m.b_x}, {m.b_h});
        L.op_qkv = L.qkv.declare_op(b, m.max_tok, 3 * q_w, d);
        uses(b, L.op_qkv, {m.b_h}, {m.b_qkv});
        std::vector<RadParamDecl> ap = {RAD_RANGE("n", 1, m.max_tok), RAD_INT("n_head", m.heads), RAD_INT("n_head_kv", m.heads),
                                        RAD_INT("head_dim", m.hd), RAD_F64("scale", 1.0 / std::sqrt(static_cast<double>(m.hd))),
                                        kv_dtype_param(m.kv_dtype)};
        L.op_attn = rad_decl_op(b, "attention", ap.data(), static_cast<int>(ap.size()), nullptr, 0);
        uses(b, L.op_attn, {m.b_qkv}, {m.b_attn});
        rad_bind_layer_kv(b, m.kv, l);
        L.op_o = L.o.declare_op(b, m.max_tok, d, q_w);
        uses(b, L.op_o, {m.b_attn}, {m.b_tmp});
        L.op_reduce_o = all_reduce(b, m.b_tmp);
        L.op_add_attn = add(b, m.b_x, m.b_tmp);
        L.op_ln2 = layer_norm(b, L.ln2_w, m.max_tok);
        uses(b, L.op_ln2, {m.b_x}, {m.b_h});
        L.op_fc = L.fc.declare_op(b, m.max_tok, ff_l, d);
        uses(b, L.op_fc, {m.b_h}, {m.b_fc});
        L.op_gelu = op(b, "gelu", {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", ff_l), RAD_STR("approx", "tanh")});
        uses(b, L.op_gelu, {m.b_fc}, {m.b_fc});
        L.op_proj = L.proj.declare_op(b, m.max_tok, d, ff_l);
        uses(b, L.op_proj, {m.b_fc}, {m.b_tmp});
        L.op_reduce_mlp = all_reduce(b, m.b_tmp);
        L.op_add_mlp = add(b, m.b_x, m.b_tmp);
    }

    bd = buf2(act, m.max_out, d);
    m.b_xo = rad_decl_buffer(b, "x_out", &bd);
    bd = buf2(RAD_F32, m.max_out, m.n_vocab);
    m.b_logits = rad_decl_buffer(b, "logits", &bd);
    m.op_gather = op(b, "gather_rows", {RAD_RANGE("n", 1, m.max_out), RAD_INT("dim", d)});
    uses(b, m.op_gather, {m.b_x}, {m.b_xo});
    m.lnf_w = decl(b, "output_norm.weight", RAD_MAP_COPY, "transformer.ln_f.weight", d, 0, RAD_SHARD_NONE, -1);
    m.lnf_b = decl(b, "output_norm.bias", RAD_MAP_COPY, "transformer.ln_f.bias", d, 0, RAD_SHARD_NONE, -1);
    m.op_lnf = layer_norm(b, m.lnf_w, m.max_out);
    uses(b, m.op_lnf, {m.b_xo, m.b_x}, {m.b_xo, m.b_x});
    // The tied head as llama's: a view of the token embeddings, read at their encoding (plain, as
    // the embedding must be).
    RadWeightDecl wo = weight(m.n_vocab, d, RAD_SHARD_NONE, -1, RAD_ACCESS_VOCAB);
    wo.source = "token_embd.weight";
    m.head.declare(b, "output.weight", wo, ARCH_CODES, m.world);
    m.op_head = m.head.declare_op(b, m.max_out, m.n_vocab, d);
    uses(b, m.op_head, {m.b_xo, m.b_x}, {m.b_logits});
    rad_declare_logits(b, m.b_logits);
    return RAD_OK;
}

void step(RadCtx* c, const RadBatch* bt) {
    const int64_t n = bt->n_tok, qw = m.heads * m.hd;
    // A column-split projection's bias is added by rank 0 alone: the all-reduce sums the ranks.
    auto col_bias = [&](rad_weight w) { return m.rank == 0 ? rad_w(w) : rad_none(); };
    RAD_ISSUE_N(c, m.op_embed, n, rad_raw(bt->token_ids, RAD_I32, n), rad_w(m.w_tok), rad_brows(m.b_x, n));
    RAD_ISSUE_N(c, m.op_pos, n, rad_raw(bt->positions, RAD_I32, n), rad_w(m.w_pos), rad_brows(m.b_tmp, n));
    RAD_ISSUE_N(c, m.op_add_pos, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_brows(m.b_x, n));
    for (const Layer& L : m.layers) {
        RAD_ISSUE_N(c, L.op_ln1, n, rad_brows(m.b_x, n), rad_w(L.ln1_w), rad_w(L.ln1_b), rad_brows(m.b_h, n));
        L.qkv.issue(c, L.op_qkv, n, rad_brows(m.b_h, n), rad_w(L.b_qkv), rad_brows(m.b_qkv, n));
        const int l = static_cast<int>(&L - m.layers.data());
        RAD_ISSUE_N(c, L.op_attn, n, rad_bview(m.b_qkv, n, 0, qw), rad_bview(m.b_qkv, n, qw, qw), rad_bview(m.b_qkv, n, 2 * qw, qw),
                    rad_kvref(m.kv, l, 0), rad_kvref(m.kv, l, 1), rad_raw(bt->positions, RAD_I32, n),
                    rad_raw(bt->cu_seqlens, RAD_I32, bt->n_seq + 1), rad_raw2(bt->block_tables, RAD_I32, bt->n_seq, bt->block_table_stride),
                    rad_brows(m.b_attn, n), kv_scale_ref(m.kv, l, m.kv_dtype, 0), kv_scale_ref(m.kv, l, m.kv_dtype, 1));
        L.o.issue(c, L.op_o, n, rad_brows(m.b_attn, n), col_bias(L.b_o), rad_brows(m.b_tmp, n));
        if (L.op_reduce_o != RAD_NULL_HANDLE) RAD_ISSUE_N(c, L.op_reduce_o, n, rad_brows(m.b_tmp, n));
        RAD_ISSUE_N(c, L.op_add_attn, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_brows(m.b_x, n));
        RAD_ISSUE_N(c, L.op_ln2, n, rad_brows(m.b_x, n), rad_w(L.ln2_w), rad_w(L.ln2_b), rad_brows(m.b_h, n));
        L.fc.issue(c, L.op_fc, n, rad_brows(m.b_h, n), rad_w(L.b_fc), rad_brows(m.b_fc, n));
        RAD_ISSUE_N(c, L.op_gelu, n, rad_brows(m.b_fc, n), rad_brows(m.b_fc, n));
        L.proj.issue(c, L.op_proj, n, rad_brows(m.b_fc, n), col_bias(L.b_proj), rad_brows(m.b_tmp, n));
        if (L.op_reduce_mlp != RAD_NULL_HANDLE) RAD_ISSUE_N(c, L.op_reduce_mlp, n, rad_brows(m.b_tmp, n));
        RAD_ISSUE_N(c, L.op_add_mlp, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_brows(m.b_x, n));
    }
    if (bt->n_out <= 0) return;
    const int64_t o = bt->n_out;
    bool every_row = o == n;
    for (int64_t i = 0; every_row && i < o; ++i) every_row = bt->out_ids[i] == i;
    const rad_buf xo = every_row ? m.b_x : m.b_xo;
    if (!every_row) RAD_ISSUE_N(c, m.op_gather, o, rad_brows(m.b_x, n), rad_raw(bt->out_ids, RAD_I32, o), rad_brows(m.b_xo, o));
    RAD_ISSUE_N(c, m.op_lnf, o, rad_brows(xo, o), rad_w(m.lnf_w), rad_w(m.lnf_b), rad_brows(xo, o));
    m.head.issue(c, m.op_head, o, rad_brows(xo, o), rad_none(), rad_brows(m.b_logits, o));
}

}  // namespace gpt2

RAD_ARCH_PLUGIN(gpt2, PLUGIN_NAME, FAMILY_ID, ARCH_QUANT, "0.1", "GPT-2 decoder (quant \"" ARCH_QUANT "\")")
