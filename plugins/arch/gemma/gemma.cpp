// The Gemma family: Gemma 2 and Gemma 3 (gemma3_text, and the text tower of a gemma3 multimodal
// checkpoint). What sets them apart from the llama family: embeddings scaled by sqrt(hidden), RMS
// norms of the form (1 + w), a norm after the attention and after the MLP as well as before each
// (four a layer), a GELU-tanh gated MLP, the attention scale from query_pre_attn_scalar, sliding-
// window layers among global ones (layer_types, else the family's pattern), and a tied head.
// Gemma 2 also soft-caps the attention scores and the final logits; Gemma 3 instead norms each
// head of q and k and gives its sliding layers their own rope base. One source, built once per
// architecture id and once per quant descriptor (CMakeLists.txt): the projections are read at the
// container's encoding (gemm_q over the planes where the build's ARCH_CODES reads them, the
// blocks' Linear); the embedding and the norms stay plain; everything else is read from the metadata.
#include <radiance/arch/blocks/rad_block_attn.h>
#include <radiance/arch/blocks/rad_block_mlp.h>
#include <radiance/arch/blocks/rad_block_quant.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace family {

using namespace radblk;

const std::string kFamily = FAMILY_ID;
const bool kGemma3 = kFamily == "gemma3";

struct Layer {
    rad_weight w_in_norm = RAD_NULL_HANDLE, w_post_attn_norm = RAD_NULL_HANDLE, w_pre_ffn_norm = RAD_NULL_HANDLE,
               w_post_ffn_norm = RAD_NULL_HANDLE;
    // op_in_norm: h = norm(x) at layer 0; past it x += tmp (the previous layer's normed MLP output)
    // first, folded into the norm where a library serves add_rms_norm (op_in_add otherwise).
    // op_pre_ffn likewise adds the normed attention output. The post norms work in place on tmp.
    rad_op op_in_add = RAD_NULL_HANDLE, op_in_norm = RAD_NULL_HANDLE, op_post_attn = RAD_NULL_HANDLE, op_pre_ffn_add = RAD_NULL_HANDLE,
           op_pre_ffn = RAD_NULL_HANDLE, op_post_ffn = RAD_NULL_HANDLE;
    AttnBlock attn;
    MlpBlock mlp;
};

struct Model {
    int64_t n_embd = 0, n_vocab = 0, max_tok = 0, max_out = 0;
    double eps = 1e-6, final_softcap = 0.0;
    rad_weight w_tok = RAD_NULL_HANDLE, w_norm = RAD_NULL_HANDLE;
    Linear head;  // a view of the embedding's table (Gemma ties them)
    rad_buf b_x, b_h, b_qkv, b_attn, b_tmp, b_gu, b_act, b_xo, b_logits;
    rad_kv kv = RAD_NULL_HANDLE;
    rad_op op_embed = RAD_NULL_HANDLE, op_final_add = RAD_NULL_HANDLE, op_gather = RAD_NULL_HANDLE, op_norm = RAD_NULL_HANDLE,
           op_head = RAD_NULL_HANDLE, op_cap = RAD_NULL_HANDLE;
    std::vector<Layer> layers;
};

Model m;

// Where the text model's tensors live: "model." in a text checkpoint; in a multimodal one (a
// text_config beside a vision tower) "model.language_model." as transformers saves it since 4.52,
// "language_model.model." before.
std::string text_prefix(const RadModelMeta* meta) {
    if (rad_meta_geti(meta, "hf.text_config.hidden_size", 0) <= 0) return "model.";
    int major = 0, minor = 0;
    const std::string v = rad_meta_gets(meta, "hf.transformers_version", "");
    if (std::sscanf(v.c_str(), "%d.%d", &major, &minor) == 2 && (major < 4 || (major == 4 && minor < 52))) return "language_model.model.";
    return "model.language_model.";
}

// Whether layer l attends through the sliding window: layer_types where the config has it, else
// the family's pattern (Gemma 2: every other layer from the first; Gemma 3: all but every
// sliding_window_pattern-th).
bool sliding_layer(const RadModelMeta* meta, int l) {
    const std::string kind = rad_meta_gets(meta, ("hf.layer_types." + std::to_string(l)).c_str(), "");
    if (!kind.empty()) return kind == "sliding_attention";
    if (!kGemma3) return l % 2 == 0;
    int64_t pattern = rad_meta_geti(meta, "hf.sliding_window_pattern", 0);
    if (pattern <= 0) pattern = rad_meta_geti(meta, "hf._sliding_window_pattern", 6);
    return (l + 1) % pattern != 0;
}

// The rope of a layer: Gemma 3's sliding layers have a base of their own (rope_parameters'
// sliding_attention set, or rope_local_base_freq in older configs) and no scaling; its global
// layers, and every Gemma 2 layer, the model's rope.
Rope layer_rope(const RadModelMeta* meta, int64_t hd, bool sliding) {
    if (!kGemma3 || !sliding)
        return Rope::from_meta(meta, hd, rad_meta_getf(meta, "rope.full_attention.theta", 0.0) > 0.0 ? "rope.full_attention." : "rope.");
    if (rad_meta_getf(meta, "rope.sliding_attention.theta", 0.0) > 0.0) return Rope::from_meta(meta, hd, "rope.sliding_attention.");
    Rope r = Rope::from_meta(meta, hd);
    r.type = "none";
    r.theta = rad_meta_getf(meta, "hf.rope_local_base_freq", 10000.0);
    return r;
}

rad_op norm(RadBuilder* b, rad_weight w) {
    return op(b, "rms_norm",
              {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd), RAD_F64("eps", m.eps), RAD_INT("unit_offset", 1),
               RAD_STR("wdtype", wdtype(b, w))},
              {w});
}

// h = norm(x + r) with x keeping the sum: add_rms_norm where a library serves it (*add null),
// else an add and the norm.
rad_op add_then_norm(RadBuilder* b, rad_weight w, rad_op* add) {
    rad_op h = op(b, "add_rms_norm",
                  {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd), RAD_F64("eps", m.eps), RAD_INT("unit_offset", 1),
                   RAD_STR("wdtype", wdtype(b, w))},
                  {w});
    if (rad_op_resolved(b, h)) {
        uses(b, h, {m.b_x, m.b_tmp}, {m.b_x, m.b_h});
        *add = RAD_NULL_HANDLE;
        return h;
    }
    *add = op(b, "add", {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd)});
    uses(b, *add, {m.b_x, m.b_tmp}, {m.b_x});
    h = norm(b, w);
    uses(b, h, {m.b_x}, {m.b_h});
    return h;
}

// tmp = norm(tmp), in place (rms_norm's y may alias x).
rad_op post_norm(RadBuilder* b, rad_weight w) {
    rad_op h = norm(b, w);
    uses(b, h, {m.b_tmp}, {m.b_tmp});
    return h;
}

rad_weight norm_weight(RadBuilder* b, const std::string& name, const std::string& source, int group) {
    map(b, name, RAD_MAP_COPY, {source});
    RadWeightDecl wn = weight(m.n_embd, 0, RAD_SHARD_NONE, group);
    const rad_weight w = rad_decl_weight(b, name.c_str(), &wn);
    require_plain(b, w, name);  // (refused by name: the declaration has failed)
    return w;
}

int declare(RadBuilder* b, const RadModelMeta* meta, const RadBuildCtx* ctx) {
    m = Model{};
    if (meta->n_layers <= 0 || meta->n_embd <= 0 || meta->n_head <= 0 || meta->head_dim <= 0 || meta->n_vocab <= 0 || meta->n_ff <= 0) {
        rad_decl_fail(b, "metadata lacks the model's dimensions (n_layers, n_embd, n_head, head_dim, n_ff, n_vocab)");
        return RAD_E_ARG;
    }
    const std::string act_fn = rad_meta_gets(meta, "hf.hidden_activation", rad_meta_gets(meta, "hf.hidden_act", "gelu_pytorch_tanh"));
    if (act_fn != "gelu_pytorch_tanh" && act_fn != "gelu_tanh") {
        rad_decl_fail(b, ("hidden_activation = " + act_fn + " is not served (GELU-tanh gated MLPs only)").c_str());
        return RAD_E_UNSUPPORTED;
    }
    if (meta_true(meta, "hf.use_bidirectional_attention")) {
        rad_decl_fail(b, "use_bidirectional_attention = true is not served (causal decoders only)");
        return RAD_E_UNSUPPORTED;
    }
    m.n_embd = meta->n_embd;
    m.n_vocab = meta->n_vocab;
    m.max_tok = ctx->max_tok;
    m.max_out = ctx->max_out_rows > 0 ? ctx->max_out_rows : ctx->max_seqs;
    m.eps = meta->rms_eps > 0 ? meta->rms_eps : 1e-6;
    m.final_softcap = rad_meta_getf(meta, "hf.final_logit_softcapping", 0.0);
    const int64_t hq = meta->n_head, hkv = meta->n_head_kv > 0 ? meta->n_head_kv : meta->n_head, hd = meta->head_dim;
    const int act = ctx->act_dtype ? ctx->act_dtype : RAD_F32;
    const int world = ctx->world_size > 0 ? ctx->world_size : 1, rank = ctx->rank;
    AttnConfig split;
    split.n_head = hq;
    split.n_head_kv = hkv;
    split.world = world;
    if (std::string why; !AttnBlock::divisible(split, &why)) {
        rad_decl_fail(b, why.c_str());
        return RAD_E_SHAPE;
    }
    const int64_t hq_l = hq / world, hkv_l = AttnBlock::kv_share(hkv, world), ff_l = MlpBlock::share(meta->n_ff, rank, world);
    // query_pre_attn_scalar^-0.5 (Gemma's own scale; head_dim^-0.5 where the config has none)
    const double qpas = rad_meta_getf(meta, "hf.query_pre_attn_scalar", static_cast<double>(hd));
    const double attn_softcap = rad_meta_getf(meta, "hf.attn_logit_softcapping", 0.0);
    const int64_t window = rad_meta_geti(meta, "hf.sliding_window", 0);

    const std::string pre = text_prefix(meta);
    map(b, "token_embd.weight", RAD_MAP_COPY, {pre + "embed_tokens.weight"});
    RadWeightDecl we = weight(m.n_vocab, m.n_embd, RAD_SHARD_NONE, -1, RAD_ACCESS_VOCAB);
    m.w_tok = rad_decl_weight(b, "token_embd.weight", &we);
    if (!require_plain(b, m.w_tok, "token_embd.weight")) return RAD_E_UNSUPPORTED;

    RadBufDecl d = buf2(act, m.max_tok, m.n_embd);
    m.b_x = rad_decl_buffer(b, "x", &d);
    m.b_h = rad_decl_buffer(b, "h", &d);
    m.b_tmp = rad_decl_buffer(b, "tmp", &d);
    d = buf2(act, m.max_tok, (hq_l + 2 * hkv_l) * hd);
    m.b_qkv = rad_decl_buffer(b, "qkv", &d);
    d = buf2(act, m.max_tok, hq_l * hd);
    m.b_attn = rad_decl_buffer(b, "attn", &d);
    d = buf2(act, m.max_tok, 2 * ff_l);
    m.b_gu = rad_decl_buffer(b, "gate_up", &d);
    d = buf2(act, m.max_tok, ff_l);
    m.b_act = rad_decl_buffer(b, "act", &d);

    m.kv = decl_attn_kv(b, "attn", ctx, hkv_l, hd);

    // x = table[id] * sqrt(hidden), the normaliser rounded to f32 (the activations' type; a
    // transformers model run in bf16 rounds it to bf16 instead)
    m.op_embed = op(b, "embed",
                    {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd), RAD_INT("vocab", m.n_vocab),
                     RAD_STR("wdtype", wdtype(b, m.w_tok)), RAD_F64("scale", static_cast<double>(std::sqrt(static_cast<float>(m.n_embd))))},
                    {m.w_tok});
    uses(b, m.op_embed, {}, {m.b_x});

    m.layers.resize(static_cast<size_t>(meta->n_layers));
    for (int l = 0; l < meta->n_layers; ++l) {
        Layer& L = m.layers[l];
        const std::string hf = "layers." + std::to_string(l) + ".", name = "blk." + std::to_string(l) + ".";
        L.w_in_norm = norm_weight(b, name + "attn_norm.weight", pre + hf + "input_layernorm.weight", l);
        L.w_post_attn_norm = norm_weight(b, name + "post_attention_norm.weight", pre + hf + "post_attention_layernorm.weight", l);
        L.w_pre_ffn_norm = norm_weight(b, name + "ffn_norm.weight", pre + hf + "pre_feedforward_layernorm.weight", l);
        L.w_post_ffn_norm = norm_weight(b, name + "post_ffw_norm.weight", pre + hf + "post_feedforward_layernorm.weight", l);
        if (l == 0) {
            L.op_in_norm = norm(b, L.w_in_norm);
            uses(b, L.op_in_norm, {m.b_x}, {m.b_h});
        } else {
            L.op_in_norm = add_then_norm(b, L.w_in_norm, &L.op_in_add);
        }

        const bool sliding = sliding_layer(meta, l);
        AttnConfig ac;
        ac.layer = l;
        ac.n_embd = m.n_embd;
        ac.n_head = hq;
        ac.n_head_kv = hkv;
        ac.head_dim = hd;
        ac.qkv_bias = meta_true(meta, "hf.attention_bias");
        ac.qk_norm = kGemma3;
        ac.qk_norm_unit_offset = true;
        ac.eps = m.eps;
        ac.window = sliding ? window : 0;
        ac.softcap = attn_softcap;
        ac.scale = 1.0 / std::sqrt(qpas);
        ac.rope = layer_rope(meta, hd, sliding);
        if (std::string why; !ac.rope.supported(&why)) {
            rad_decl_fail(b, why.c_str());
            return RAD_E_UNSUPPORTED;
        }
        ac.max_tok = m.max_tok;
        ac.world = world;
        ac.hf_prefix = pre + hf + "self_attn.";
        ac.name = name;
        ac.rope_in_attention = true;
        ac.kv_dtype = kv_dtype(ctx);
        ac.quant_codes = ARCH_CODES;
        L.attn.declare(b, ac, AttnBuffers{m.b_h, m.b_qkv, m.b_attn, m.b_tmp}, m.kv);
        L.op_post_attn = post_norm(b, L.w_post_attn_norm);
        L.op_pre_ffn = add_then_norm(b, L.w_pre_ffn_norm, &L.op_pre_ffn_add);

        MlpConfig mc;
        mc.layer = l;
        mc.n_embd = m.n_embd;
        mc.n_ff = meta->n_ff;
        mc.max_tok = m.max_tok;
        mc.world = world;
        mc.rank = rank;
        mc.act = "geglu";
        mc.hf_prefix = pre + hf + "mlp.";
        mc.name = name;
        mc.quant_codes = ARCH_CODES;
        L.mlp.declare(b, mc, MlpBuffers{m.b_h, m.b_gu, m.b_act, m.b_tmp});
        L.op_post_ffn = post_norm(b, L.w_post_ffn_norm);
    }
    m.op_final_add = op(b, "add", {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd)});
    uses(b, m.op_final_add, {m.b_x, m.b_tmp}, {m.b_x});

    // The head runs over the rows whose logits are wanted only, and reads the embedding table
    // (Gemma ties them).
    d = buf2(act, m.max_out, m.n_embd);
    m.b_xo = rad_decl_buffer(b, "x_out", &d);
    d = buf2(RAD_F32, m.max_out, m.n_vocab);
    m.b_logits = rad_decl_buffer(b, "logits", &d);
    m.op_gather = op(b, "gather_rows", {RAD_RANGE("n", 1, m.max_out), RAD_INT("dim", m.n_embd)});
    uses(b, m.op_gather, {m.b_x}, {m.b_xo});
    map(b, "output_norm.weight", RAD_MAP_COPY, {pre + "norm.weight"});
    RadWeightDecl wn = weight(m.n_embd, 0, RAD_SHARD_NONE, -1);
    m.w_norm = rad_decl_weight(b, "output_norm.weight", &wn);
    if (!require_plain(b, m.w_norm, "output_norm.weight")) return RAD_E_UNSUPPORTED;
    m.op_norm = op(b, "rms_norm",
                   {RAD_RANGE("n", 1, m.max_out), RAD_INT("dim", m.n_embd), RAD_F64("eps", m.eps), RAD_INT("unit_offset", 1),
                    RAD_STR("wdtype", wdtype(b, m.w_norm))},
                   {m.w_norm});
    uses(b, m.op_norm, {m.b_xo, m.b_x}, {m.b_xo, m.b_x});
    // The head as llama's tied one: a view of the embedding's table, read at its encoding (plain,
    // as the embedding must be; a quantised table would be refused above, not dequantised).
    RadWeightDecl wo = weight(m.n_vocab, m.n_embd, RAD_SHARD_NONE, -1, RAD_ACCESS_VOCAB);
    wo.source = "token_embd.weight";
    if (!m.head.declare(b, "output.weight", wo, ARCH_CODES, world)) return RAD_E_UNSUPPORTED;
    m.op_head = m.head.declare_op(b, m.max_out, m.n_vocab, m.n_embd);
    uses(b, m.op_head, {m.b_xo, m.b_x}, {m.b_logits});
    if (m.final_softcap > 0) {  // Gemma 2: logits = cap * tanh(logits / cap)
        m.op_cap = op(b, "softcap", {RAD_RANGE("n", 1, m.max_out), RAD_INT("dim", m.n_vocab), RAD_F64("cap", m.final_softcap)});
        uses(b, m.op_cap, {m.b_logits}, {m.b_logits});
    }
    rad_declare_logits(b, m.b_logits);
    return RAD_OK;
}

void step(RadCtx* c, const RadBatch* bt) {
    const int64_t n = bt->n_tok;
    RAD_ISSUE_N(c, m.op_embed, n, rad_raw(bt->token_ids, RAD_I32, n), rad_w(m.w_tok), rad_brows(m.b_x, n));
    for (size_t l = 0; l < m.layers.size(); ++l) {
        const Layer& L = m.layers[l];
        if (l == 0) {
            RAD_ISSUE_N(c, L.op_in_norm, n, rad_brows(m.b_x, n), rad_w(L.w_in_norm), rad_brows(m.b_h, n));
        } else if (L.op_in_add == RAD_NULL_HANDLE) {
            RAD_ISSUE_N(c, L.op_in_norm, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_w(L.w_in_norm), rad_brows(m.b_h, n));
        } else {
            RAD_ISSUE_N(c, L.op_in_add, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_brows(m.b_x, n));
            RAD_ISSUE_N(c, L.op_in_norm, n, rad_brows(m.b_x, n), rad_w(L.w_in_norm), rad_brows(m.b_h, n));
        }
        L.attn.step(c, bt);
        RAD_ISSUE_N(c, L.op_post_attn, n, rad_brows(m.b_tmp, n), rad_w(L.w_post_attn_norm), rad_brows(m.b_tmp, n));
        if (L.op_pre_ffn_add == RAD_NULL_HANDLE) {
            RAD_ISSUE_N(c, L.op_pre_ffn, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_w(L.w_pre_ffn_norm), rad_brows(m.b_h, n));
        } else {
            RAD_ISSUE_N(c, L.op_pre_ffn_add, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_brows(m.b_x, n));
            RAD_ISSUE_N(c, L.op_pre_ffn, n, rad_brows(m.b_x, n), rad_w(L.w_pre_ffn_norm), rad_brows(m.b_h, n));
        }
        L.mlp.step(c, bt);
        RAD_ISSUE_N(c, L.op_post_ffn, n, rad_brows(m.b_tmp, n), rad_w(L.w_post_ffn_norm), rad_brows(m.b_tmp, n));
    }
    RAD_ISSUE_N(c, m.op_final_add, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_brows(m.b_x, n));
    if (bt->n_out <= 0) return;  // a chunk that finishes no sequence runs no head
    const int64_t o = bt->n_out;
    // Every row an output, in order (a decode step): the head reads the residual stream itself.
    bool every_row = o == n;
    for (int64_t i = 0; every_row && i < o; ++i) every_row = bt->out_ids[i] == i;
    const rad_buf xo = every_row ? m.b_x : m.b_xo;  // (normed in place: nothing reads b_x after the head)
    if (!every_row) RAD_ISSUE_N(c, m.op_gather, o, rad_brows(m.b_x, n), rad_raw(bt->out_ids, RAD_I32, o), rad_brows(m.b_xo, o));
    RAD_ISSUE_N(c, m.op_norm, o, rad_brows(xo, o), rad_w(m.w_norm), rad_brows(xo, o));
    m.head.issue(c, m.op_head, o, rad_brows(xo, o), rad_none(), rad_brows(m.b_logits, o));
    if (m.op_cap != RAD_NULL_HANDLE) RAD_ISSUE_N(c, m.op_cap, o, rad_brows(m.b_logits, o), rad_brows(m.b_logits, o));
}

}  // namespace family

RAD_ARCH_PLUGIN(family, PLUGIN_NAME, FAMILY_ID, ARCH_QUANT, "0.1", "Gemma decoder (" FAMILY_ID ", quant \"" ARCH_QUANT "\")")
