// The llama family: Llama (incl. llama3 rope scaling, tied embeddings), Mistral (sliding window),
// Qwen2 (q/k/v bias) and Qwen3 (per-head q/k norms, head_dim read from metadata), and their
// mixtures of experts: Mixtral (Mistral's attention), Qwen3-MoE (Qwen3's) and Qwen2-MoE (Qwen2's,
// with a gated shared expert), whose MLPs are routed experts (rad_block_moe.h) on every layer the
// config makes sparse; Phi-3 (Llama's layer with its projections stored fused, qkv_proj and
// gate_up_proj, a sliding window where the config sets one, LongRoPE). One source, built once per
// architecture id and, for the dense families, once per quant descriptor (CMakeLists.txt): what
// differs is read from the metadata, fixed by the family, or, for a quantised build, the code
// dtypes its projections are read in (ARCH_CODES: the planes go to gemm_q as they are stored;
// rad_block_linear.h).
#include <radiance/arch/blocks/rad_block_attn.h>
#include <radiance/arch/blocks/rad_block_mlp.h>
#include <radiance/arch/blocks/rad_block_moe.h>
#include <radiance/arch/blocks/rad_block_quant.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace family {

using namespace radblk;

struct Layer {
    rad_weight w_attn_norm, w_ffn_norm;
    // Fused (Model::fused): op_ffn_norm, and op_attn_norm past layer 0, are add_rms_norm (the
    // residual add before them folded in), and the add ops are absent. Unfused: plain norms, and
    // op_add_attn / op_add_ffn close the attention and the MLP. With Model::decode_fusions none
    // of the four: the blocks norm their input and add into x themselves.
    rad_op op_attn_norm = RAD_NULL_HANDLE, op_ffn_norm = RAD_NULL_HANDLE, op_add_attn = RAD_NULL_HANDLE, op_add_ffn = RAD_NULL_HANDLE;
    AttnBlock attn;
    bool sparse = false;  // routed experts (moe) in place of the dense MLP
    MlpBlock mlp;
    MoeBlock moe;
};

struct Model {
    int64_t n_embd = 0, n_vocab = 0, max_tok = 0, max_out = 0;
    double eps = 1e-6;
    rad_weight w_tok = RAD_NULL_HANDLE, w_norm = RAD_NULL_HANDLE, w_out = RAD_NULL_HANDLE;
    Linear head;  // output.weight, or a view of the embedding's table when tied
    rad_buf b_x, b_h, b_qkv, b_attn, b_tmp, b_gu, b_act, b_xo, b_logits, b_logits_local = RAD_NULL_HANDLE;
    rad_buf b_router = RAD_NULL_HANDLE, b_expert_ids = RAD_NULL_HANDLE, b_expert_w = RAD_NULL_HANDLE;  // sparse layers
    rad_buf b_shared_gu = RAD_NULL_HANDLE, b_shared_act = RAD_NULL_HANDLE, b_shared_out = RAD_NULL_HANDLE, b_shared_g = RAD_NULL_HANDLE;
    rad_kv kv = RAD_NULL_HANDLE;
    rad_op op_embed = RAD_NULL_HANDLE, op_gather = RAD_NULL_HANDLE, op_norm = RAD_NULL_HANDLE, op_head = RAD_NULL_HANDLE,
           op_vgather = RAD_NULL_HANDLE;
    // The embedding program (rad_declare_pooled): the rows a step names in hidden_ids gathered
    // from x and put through the final norm into b_pooled. Its own ops, not the head's: the head
    // may fold the norm into its gemm (head_normed) and so never materialise the normed row.
    rad_buf b_pooled = RAD_NULL_HANDLE;
    rad_op op_pool_gather = RAD_NULL_HANDLE, op_pool_norm = RAD_NULL_HANDLE;
    // add_rms_norm resolves (fusion is selection: asked once, at the first norm after a residual
    // add); op_final_add then adds the last layer's MLP output, which no norm folds in
    bool fused = false;
    rad_op op_final_add = RAD_NULL_HANDLE;
    // One rank, and a loaded library serves gemm_add, rms_norm_gemm and rms_norm_gemm_swiglu on
    // these shapes (docs/OPS.md): the qkv and [gate|up] projections norm the residual stream x
    // themselves and the output and down projections add into it, so a layer issues no norm or
    // add of its own (two launches and two round trips fewer a layer in decode on a card)
    bool decode_fusions = false;
    // With decode_fusions, where a library serves it on the head's shape: op_head is rms_norm_gemm
    // (the final norm in the head's gemv) and op_norm is absent
    bool head_normed = false;
    std::vector<Layer> layers;
};

Model m;

const std::string kFamily = FAMILY_ID;
// The code dtypes this build reads quantised projections in: "" for the unquantised build, which
// refuses a quantised weight by name (rad_block_linear.h).
const char* const kCodes = ARCH_CODES;
// The mixtures of experts and the dense family whose attention they share.
const bool kMoe = kFamily == "mixtral" || kFamily == "qwen3moe" || kFamily == "qwen2moe";
const std::string kAttnFamily = kFamily == "mixtral"    ? "mistral"
                                : kFamily == "qwen3moe" ? "qwen3"
                                : kFamily == "qwen2moe" ? "qwen2"
                                                        : kFamily;

bool qkv_bias(const RadModelMeta* meta) {
    if (kAttnFamily == "qwen2") return true;  // Qwen2 always carries q/k/v biases
    if (kAttnFamily == "mistral" || kAttnFamily == "phi3") return false;
    return meta_true(meta, "hf.attention_bias");
}

// Whether layer l's MLP is routed experts: Mixtral's always; Qwen-MoE's where the layer is not in
// mlp_only_layers and (l + 1) is a multiple of decoder_sparse_step, as transformers decides.
bool sparse_layer(const RadModelMeta* meta, int l) {
    if (!kMoe) return false;
    if (kFamily == "mixtral") return true;
    for (int i = 0;; ++i) {
        const int64_t only = rad_meta_geti(meta, ("hf.mlp_only_layers." + std::to_string(i)).c_str(), -1);
        if (only < 0) break;
        if (only == l) return false;
    }
    const int64_t step = rad_meta_geti(meta, "hf.decoder_sparse_step", 1);
    return meta->n_expert > 0 && step > 0 && (l + 1) % step == 0;
}

MoeConfig moe_config(const RadModelMeta* meta, int l, int world, int rank) {
    MoeConfig mc;
    mc.layer = l;
    mc.n_embd = m.n_embd;
    mc.n_ff = kFamily == "mixtral" ? meta->n_ff : rad_meta_geti(meta, "hf.moe_intermediate_size", 0);
    mc.n_expert = meta->n_expert;
    mc.n_used = meta->n_expert_used;
    mc.norm_topk = kFamily == "mixtral" || meta_true(meta, "hf.norm_topk_prob");  // Mixtral always renormalises
    mc.max_tok = m.max_tok;
    mc.world = world;
    mc.rank = rank;
    const std::string hf = "model.layers." + std::to_string(l) + ".";
    mc.hf_prefix = hf + (kFamily == "mixtral" ? "block_sparse_moe." : "mlp.");
    mc.name = "blk." + std::to_string(l) + ".";
    if (kFamily == "mixtral") mc.names = ExpertNames{"w1", "w3", "w2", "gate"};
    if (kFamily == "qwen2moe") mc.n_shared_ff = rad_meta_geti(meta, "hf.shared_expert_intermediate_size", 0);
    return mc;
}

// The sliding window of layer l, 0 for full attention.
int64_t layer_window(const RadModelMeta* meta, int l) {
    const int64_t w = rad_meta_geti(meta, "hf.sliding_window", 0);
    if (w <= 0) return 0;
    if (kAttnFamily == "mistral" || kAttnFamily == "phi3") return w;  // transformers applies it to every layer
    const std::string kind = rad_meta_gets(meta, ("hf.layer_types." + std::to_string(l)).c_str(), "");
    if (!kind.empty()) return kind == "sliding_attention" ? w : 0;
    return meta_true(meta, "hf.use_sliding_window") ? w : 0;
}

rad_op norm(RadBuilder* b, rad_weight w) {
    return op(b, "rms_norm",
              {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd), RAD_F64("eps", m.eps), RAD_STR("wdtype", wdtype(b, w))}, {w});
}

// The residual add folded into the norm after it (x += tmp; h = norm(x)), or null where no loaded
// library serves add_rms_norm.
rad_op add_norm(RadBuilder* b, rad_weight w) {
    rad_op h = op(b, "add_rms_norm",
                  {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd), RAD_F64("eps", m.eps), RAD_STR("wdtype", wdtype(b, w))}, {w});
    if (!rad_op_resolved(b, h)) return RAD_NULL_HANDLE;
    uses(b, h, {m.b_x, m.b_tmp}, {m.b_x, m.b_h});
    return h;
}

// Whether the loaded libraries serve the decode-path fusions on this model's shapes (asked with
// the embedding's dtype; a layer whose weights then differ fails its declaration, as with
// add_rms_norm).
bool serves_decode_fusions(RadBuilder* b, int64_t qkv_rows, int64_t q_width, int64_t ff, const char* wd) {
    auto normed = [&](const char* name, int64_t N) {
        return rad_op_resolved(b, op(b, name,
                                     {RAD_RANGE("M", 1, m.max_tok), RAD_INT("N", N), RAD_INT("K", m.n_embd), RAD_F64("eps", m.eps),
                                      RAD_STR("wdtype", wd)})) != 0;
    };
    auto adds = [&](int64_t K) {
        return rad_op_resolved(b, op(b, "gemm_add",
                                     {RAD_RANGE("M", 1, m.max_tok), RAD_INT("N", m.n_embd), RAD_INT("K", K), RAD_STR("wdtype", wd)})) != 0;
    };
    return normed("rms_norm_gemm", qkv_rows) && normed("rms_norm_gemm_swiglu", ff) && adds(q_width) && adds(ff);
}

// x += tmp: the residual add, where no norm folds it in.
rad_op residual_add(RadBuilder* b) {
    rad_op h = op(b, "add", {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd)});
    uses(b, h, {m.b_x, m.b_tmp}, {m.b_x});
    return h;
}

// h = norm(x), plain.
rad_op plain_norm(RadBuilder* b, rad_weight w) {
    rad_op h = norm(b, w);
    uses(b, h, {m.b_x}, {m.b_h});
    return h;
}

// The norm before the MLP where the blocks do not fold it in: add_rms_norm where a library
// serves it (decided at layer 0), else the residual add and a plain norm. False (and the
// declaration failed) where add_rms_norm resolved for one layer and not another.
bool declare_ffn_norm(RadBuilder* b, Layer& L, int l) {
    if (l == 0)
        m.fused = (L.op_ffn_norm = add_norm(b, L.w_ffn_norm)) != RAD_NULL_HANDLE;
    else if (m.fused)
        L.op_ffn_norm = add_norm(b, L.w_ffn_norm);
    if (!m.fused) {
        L.op_add_attn = residual_add(b);
        L.op_ffn_norm = plain_norm(b, L.w_ffn_norm);
    } else if (L.op_ffn_norm == RAD_NULL_HANDLE || L.op_attn_norm == RAD_NULL_HANDLE) {
        rad_decl_fail(b, "add_rms_norm resolved for one layer and not another (weights of other dtypes?)");
        return false;
    }
    return true;
}

// Layer l's routed experts (and a shared expert where the family has one), reading h and writing
// tmp as the dense MLP does; RAD_OK, or the declaration failed naming what is not served.
int declare_sparse_mlp(RadBuilder* b, const RadModelMeta* meta, Layer& L, int l, int world, int rank, int act) {
    RadBufDecl d;
    // Routers other than softmax top-k (DeepSeek's sigmoid scores, grouped top-k) are not
    // served: refuse them by name rather than route differently from the checkpoint.
    for (const char* key : {"hf.scoring_func", "hf.topk_method"}) {
        const std::string v = rad_meta_gets(meta, key, "");
        if (!v.empty() && v != "softmax" && v != "greedy") {
            rad_decl_fail(b, (std::string(key + 3) + " = " + v + " is not served (softmax top-k routing only)").c_str());
            return RAD_E_UNSUPPORTED;
        }
    }
    const MoeConfig moe = moe_config(meta, l, world, rank);
    if (std::string why; !MoeBlock::valid(moe, &why)) {
        rad_decl_fail(b, why.c_str());
        return RAD_E_ARG;
    }
    if (m.b_router == RAD_NULL_HANDLE) {  // one set for every sparse layer
        d = buf2(act, m.max_tok, moe.n_expert);
        m.b_router = rad_decl_buffer(b, "router_logits", &d);
        d = buf2(RAD_I32, m.max_tok, moe.n_used);
        m.b_expert_ids = rad_decl_buffer(b, "expert_ids", &d);
        d = buf2(RAD_F32, m.max_tok, moe.n_used);
        m.b_expert_w = rad_decl_buffer(b, "expert_w", &d);
        if (moe.n_shared_ff > 0) {
            const int64_t sff_l = MlpBlock::share(moe.n_shared_ff, rank, world);
            d = buf2(act, m.max_tok, 2 * sff_l);
            m.b_shared_gu = rad_decl_buffer(b, "shared_gate_up", &d);
            d = buf2(act, m.max_tok, sff_l);
            m.b_shared_act = rad_decl_buffer(b, "shared_act", &d);
            d = buf2(act, m.max_tok, m.n_embd);
            m.b_shared_out = rad_decl_buffer(b, "shared_out", &d);
            d = buf2(act, m.max_tok, 1);
            m.b_shared_g = rad_decl_buffer(b, "shared_gate", &d);
        }
    }
    MoeBuffers mb{m.b_h, m.b_router, m.b_expert_ids, m.b_expert_w, m.b_tmp};
    mb.shared_gu = m.b_shared_gu;
    mb.shared_act = m.b_shared_act;
    mb.shared_out = m.b_shared_out;
    mb.shared_g = m.b_shared_g;
    L.moe.declare(b, moe, mb);
    return RAD_OK;
}

// The pooled output: any row of the step (a mean pools every prompt row) gathered from x and
// normed by the final norm, in place. Declared where the loaded libraries serve both ops at that
// range; elsewhere the model serves no embeddings (the engine refuses steps that ask).
void declare_pooled(RadBuilder* b, int act) {
    m.op_pool_gather = op(b, "gather_rows", {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd)});
    m.op_pool_norm =
        op(b, "rms_norm",
           {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd), RAD_F64("eps", m.eps), RAD_STR("wdtype", wdtype(b, m.w_norm))},
           {m.w_norm});
    if (!rad_op_resolved(b, m.op_pool_gather) || !rad_op_resolved(b, m.op_pool_norm)) {
        m.op_pool_gather = m.op_pool_norm = RAD_NULL_HANDLE;
        rad_note(b, "no pooled output: gather_rows or rms_norm is not served over max_tok rows");
        return;
    }
    RadBufDecl d = buf2(act, m.max_tok, m.n_embd);
    m.b_pooled = rad_decl_buffer(b, "pooled", &d);
    uses(b, m.op_pool_gather, {m.b_x}, {m.b_pooled});
    uses(b, m.op_pool_norm, {m.b_pooled}, {m.b_pooled});
    rad_declare_pooled(b, m.b_pooled);
}

int declare(RadBuilder* b, const RadModelMeta* meta, const RadBuildCtx* ctx) {
    m = Model{};
    if (meta->n_layers <= 0 || meta->n_embd <= 0 || meta->n_head <= 0 || meta->head_dim <= 0 || meta->n_vocab <= 0) {
        rad_decl_fail(b, "metadata lacks the model's dimensions (n_layers, n_embd, n_head, head_dim, n_vocab)");
        return RAD_E_ARG;
    }
    if (meta_true(meta, "hf.mlp_bias")) {
        rad_decl_fail(b, "mlp_bias = true is not served by this plugin");
        return RAD_E_UNSUPPORTED;
    }
    // The gate's activation: SiLU throughout this family; any other would be a different model.
    if (const std::string act = rad_meta_gets(meta, "hf.hidden_act", "silu"); act != "silu" && act != "swish") {
        rad_decl_fail(b, ("hidden_act '" + act + "' is not served by this plugin (silu only)").c_str());
        return RAD_E_UNSUPPORTED;
    }
    m.n_embd = meta->n_embd;
    m.n_vocab = meta->n_vocab;
    m.max_tok = ctx->max_tok;
    m.max_out = ctx->max_out_rows > 0 ? ctx->max_out_rows : ctx->max_seqs;
    m.eps = meta->rms_eps > 0 ? meta->rms_eps : 1e-6;
    const int64_t hq = meta->n_head, hkv = meta->n_head_kv > 0 ? meta->n_head_kv : meta->n_head, hd = meta->head_dim;
    const int64_t n_ff = meta->n_ff;
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
    const int64_t hq_l = hq / world, hkv_l = AttnBlock::kv_share(hkv, world), ff_l = MlpBlock::share(n_ff, rank, world);
    Rope rope = Rope::from_meta(meta, hd);
    std::string why;
    if (!rope.supported(&why)) {
        rad_decl_fail(b, why.c_str());
        return RAD_E_UNSUPPORTED;
    }

    map(b, "token_embd.weight", RAD_MAP_COPY, {"model.embed_tokens.weight"});
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

    m.op_embed =
        op(b, "embed",
           {RAD_RANGE("n", 1, m.max_tok), RAD_INT("dim", m.n_embd), RAD_INT("vocab", m.n_vocab), RAD_STR("wdtype", wdtype(b, m.w_tok))},
           {m.w_tok});
    uses(b, m.op_embed, {}, {m.b_x});
    // One rank, where a library serves them: the norms into the gemvs after them, the residual
    // adds into the gemvs before them (docs/PERFORMANCE.md, session 10: batch-1 decode 231.8 /
    // 232.2 -> 238.0 / 236.5 tok/s on the 8B shape, H200)
    // (dense MLPs only: a mixture's layers take the plain norms and adds)
    // (plain projections only: a build that reads them quantised declares them unfused)
    m.decode_fusions =
        !kMoe && world == 1 && !*kCodes && serves_decode_fusions(b, (hq_l + 2 * hkv_l) * hd, hq_l * hd, ff_l, wdtype(b, m.w_tok));

    m.layers.resize(static_cast<size_t>(meta->n_layers));
    for (int l = 0; l < meta->n_layers; ++l) {
        Layer& L = m.layers[l];
        const std::string hf = "model.layers." + std::to_string(l) + ".", name = "blk." + std::to_string(l) + ".";
        map(b, name + "attn_norm.weight", RAD_MAP_COPY, {hf + "input_layernorm.weight"});
        RadWeightDecl wn = weight(m.n_embd, 0, RAD_SHARD_NONE, l);
        L.w_attn_norm = rad_decl_weight(b, (name + "attn_norm.weight").c_str(), &wn);
        if (!require_plain(b, L.w_attn_norm, name + "attn_norm.weight")) return RAD_E_UNSUPPORTED;
        if (!m.decode_fusions) L.op_attn_norm = m.fused && l > 0 ? add_norm(b, L.w_attn_norm) : plain_norm(b, L.w_attn_norm);

        AttnConfig ac;
        ac.layer = l;
        ac.n_embd = m.n_embd;
        ac.n_head = hq;
        ac.n_head_kv = hkv;
        ac.head_dim = hd;
        ac.qkv_bias = qkv_bias(meta);
        ac.qk_norm = kAttnFamily == "qwen3";
        ac.eps = m.eps;
        ac.window = layer_window(meta, l);
        ac.rope = rope;
        ac.max_tok = m.max_tok;
        ac.world = world;
        ac.hf_prefix = hf + "self_attn.";
        if (kFamily == "phi3") ac.fused_qkv = "qkv_proj.weight";
        ac.name = name;
        // rope_attention where a library serves it (docs/PERFORMANCE.md, session 14)
        ac.rope_in_attention = true;
        ac.kv_dtype = kv_dtype(ctx);
        ac.quant_codes = kCodes;
        if (m.decode_fusions) {  // x in and out: the residual stream
            ac.norm_w = L.w_attn_norm;
            ac.norm_eps = m.eps;
            ac.residual_out = true;
        }
        L.attn.declare(
            b, ac, m.decode_fusions ? AttnBuffers{m.b_x, m.b_qkv, m.b_attn, m.b_x} : AttnBuffers{m.b_h, m.b_qkv, m.b_attn, m.b_tmp}, m.kv);
        map(b, name + "ffn_norm.weight", RAD_MAP_COPY, {hf + "post_attention_layernorm.weight"});
        L.w_ffn_norm = rad_decl_weight(b, (name + "ffn_norm.weight").c_str(), &wn);
        if (!require_plain(b, L.w_ffn_norm, name + "ffn_norm.weight")) return RAD_E_UNSUPPORTED;
        if (!m.decode_fusions && !declare_ffn_norm(b, L, l)) return RAD_E_UNSUPPORTED;
        L.sparse = sparse_layer(meta, l);
        if (L.sparse) {
            if (const int rc = declare_sparse_mlp(b, meta, L, l, world, rank, act); rc != RAD_OK) return rc;
            if (!m.fused) L.op_add_ffn = residual_add(b);
            continue;
        }
        MlpConfig mc;
        mc.layer = l;
        mc.n_embd = m.n_embd;
        mc.n_ff = n_ff;
        mc.max_tok = m.max_tok;
        mc.world = world;
        mc.rank = rank;
        mc.hf_prefix = hf + "mlp.";
        if (kFamily == "phi3") mc.fused_gate_up = "gate_up_proj.weight";
        mc.name = name;
        mc.quant_codes = kCodes;
        if (m.decode_fusions) {
            mc.norm_w = L.w_ffn_norm;
            mc.norm_eps = m.eps;
            mc.residual_out = true;
        }
        L.mlp.declare(b, mc, m.decode_fusions ? MlpBuffers{m.b_x, m.b_gu, m.b_act, m.b_x} : MlpBuffers{m.b_h, m.b_gu, m.b_act, m.b_tmp});
        if (!m.fused && !m.decode_fusions) L.op_add_ffn = residual_add(b);
    }
    if (m.fused) m.op_final_add = residual_add(b);

    map(b, "output_norm.weight", RAD_MAP_COPY, {"model.norm.weight"});
    RadWeightDecl wn = weight(m.n_embd, 0, RAD_SHARD_NONE, -1);
    m.w_norm = rad_decl_weight(b, "output_norm.weight", &wn);
    if (!require_plain(b, m.w_norm, "output_norm.weight")) return RAD_E_UNSUPPORTED;
    declare_pooled(b, act);

    // The head runs over the rows whose logits are wanted only.
    d = buf2(act, m.max_out, m.n_embd);
    m.b_xo = rad_decl_buffer(b, "x_out", &d);
    d = buf2(RAD_F32, m.max_out, m.n_vocab);
    m.b_logits = rad_decl_buffer(b, "logits", &d);
    m.op_gather = op(b, "gather_rows", {RAD_RANGE("n", 1, m.max_out), RAD_INT("dim", m.n_embd)});
    uses(b, m.op_gather, {m.b_x}, {m.b_xo});
    // Under tensor parallelism an untied head is split by vocabulary rows, each rank computing its
    // span of the logits, then gathered (when a loaded library serves all_gather); a tied head
    // reads the replicated embedding table whole.
    const bool tied = meta_true(meta, "hf.tie_word_embeddings");
    if (world > 1 && !tied) {
        m.op_vgather = op(b, "all_gather", {RAD_RANGE("n", 1, m.max_out), RAD_INT("total", m.n_vocab)});
        if (!rad_op_resolved(b, m.op_vgather)) m.op_vgather = RAD_NULL_HANDLE;
    }
    const int64_t v_local = m.op_vgather != RAD_NULL_HANDLE ? MlpBlock::share(m.n_vocab, rank, world) : m.n_vocab;
    RadWeightDecl wo = weight(m.n_vocab, m.n_embd, m.op_vgather != RAD_NULL_HANDLE ? RAD_SHARD_ROW : RAD_SHARD_NONE, -1, RAD_ACCESS_VOCAB);
    if (tied) {
        wo.source = "token_embd.weight";  // tied: the head reads the embedding table
    } else {
        map(b, "output.weight", RAD_MAP_COPY, {"lm_head.weight"});
    }
    if (!m.head.declare(b, "output.weight", wo, kCodes, world)) return RAD_E_UNSUPPORTED;  // a tied head views the embedding's codes
    m.w_out = m.head.w;
    rad_buf head_out = m.b_logits;
    if (m.op_vgather != RAD_NULL_HANDLE) {
        d = buf2(RAD_F32, m.max_out, v_local);
        m.b_logits_local = head_out = rad_decl_buffer(b, "logits_local", &d);
    }
    // The final norm in the head's gemv under the decode fusions (level with a launch of its own,
    // a launch a step fewer: docs/PERFORMANCE.md, session 12)
    if (m.decode_fusions && !m.head.quantised && std::string(wdtype(b, m.w_norm)) == wdtype(b, m.w_out)) {
        m.op_head = op(b, "rms_norm_gemm",
                       {RAD_RANGE("M", 1, m.max_out), RAD_INT("N", v_local), RAD_INT("K", m.n_embd), RAD_F64("eps", m.eps),
                        RAD_STR("wdtype", wdtype(b, m.w_out))},
                       {m.w_norm, m.w_out});
        m.head_normed = rad_op_resolved(b, m.op_head) != 0;
    }
    if (!m.head_normed) {
        m.op_norm =
            op(b, "rms_norm",
               {RAD_RANGE("n", 1, m.max_out), RAD_INT("dim", m.n_embd), RAD_F64("eps", m.eps), RAD_STR("wdtype", wdtype(b, m.w_norm))},
               {m.w_norm});
        uses(b, m.op_norm, {m.b_xo, m.b_x}, {m.b_xo, m.b_x});
        m.op_head = m.head.declare_op(b, m.max_out, v_local, m.n_embd);
    }
    // The head reads x itself when every row is an output (step): x stays live to here, or the
    // arena would place a later buffer (logits_local under tensor parallelism) over it.
    uses(b, m.op_head, {m.b_xo, m.b_x}, {head_out});
    if (m.op_vgather != RAD_NULL_HANDLE) uses(b, m.op_vgather, {head_out}, {m.b_logits});
    rad_declare_logits(b, m.b_logits);
    return RAD_OK;
}

void step(RadCtx* c, const RadBatch* bt) {
    const int64_t n = bt->n_tok;
    RAD_ISSUE_N(c, m.op_embed, n, rad_raw(bt->token_ids, RAD_I32, n), rad_w(m.w_tok), rad_brows(m.b_x, n));
    for (size_t l = 0; l < m.layers.size(); ++l) {
        const Layer& L = m.layers[l];
        if (m.decode_fusions) {  // each block norms x as it reads it and adds its output into x
            L.attn.step(c, bt);
            L.mlp.step(c, bt);
            continue;
        }
        if (m.fused && l > 0)  // the previous layer's MLP output joins the residual here
            RAD_ISSUE_N(c, L.op_attn_norm, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_w(L.w_attn_norm), rad_brows(m.b_h, n));
        else
            RAD_ISSUE_N(c, L.op_attn_norm, n, rad_brows(m.b_x, n), rad_w(L.w_attn_norm), rad_brows(m.b_h, n));
        L.attn.step(c, bt);
        if (m.fused) {
            RAD_ISSUE_N(c, L.op_ffn_norm, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_w(L.w_ffn_norm), rad_brows(m.b_h, n));
        } else {
            RAD_ISSUE_N(c, L.op_add_attn, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_brows(m.b_x, n));
            RAD_ISSUE_N(c, L.op_ffn_norm, n, rad_brows(m.b_x, n), rad_w(L.w_ffn_norm), rad_brows(m.b_h, n));
        }
        if (L.sparse)
            L.moe.step(c, bt);
        else
            L.mlp.step(c, bt);
        if (!m.fused) RAD_ISSUE_N(c, L.op_add_ffn, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_brows(m.b_x, n));
    }
    if (m.fused) RAD_ISSUE_N(c, m.op_final_add, n, rad_brows(m.b_x, n), rad_brows(m.b_tmp, n), rad_brows(m.b_x, n));
    // Embedding rows first: the head below may norm x in place
    if (bt->n_hidden > 0 && m.b_pooled != RAD_NULL_HANDLE) {
        const int64_t h = bt->n_hidden;
        RAD_ISSUE_N(c, m.op_pool_gather, h, rad_brows(m.b_x, n), rad_raw(bt->hidden_ids, RAD_I32, h), rad_brows(m.b_pooled, h));
        RAD_ISSUE_N(c, m.op_pool_norm, h, rad_brows(m.b_pooled, h), rad_w(m.w_norm), rad_brows(m.b_pooled, h));
    }
    if (bt->n_out <= 0) return;  // a chunk that finishes no sequence runs no head
    const int64_t o = bt->n_out;
    // Every row an output, in order (a decode step): the head reads the residual stream itself
    // and no gather runs (a launch and a round trip a step on a card; the engine keys recorded
    // graphs by this as well; level with the gather at batch 1 and 64, docs/PERFORMANCE.md
    // session 14).
    bool every_row = o == n;
    for (int64_t i = 0; every_row && i < o; ++i) every_row = bt->out_ids[i] == i;
    const rad_buf xo = every_row ? m.b_x : m.b_xo;  // (normed in place below: nothing reads b_x after the head)
    if (!every_row) RAD_ISSUE_N(c, m.op_gather, o, rad_brows(m.b_x, n), rad_raw(bt->out_ids, RAD_I32, o), rad_brows(m.b_xo, o));
    if (m.head_normed) {  // one rank (decode fusions): no vocabulary gather
        RAD_ISSUE_N(c, m.op_head, o, rad_brows(xo, o), rad_w(m.w_norm), rad_w(m.w_out), rad_none(), rad_brows(m.b_logits, o));
        return;
    }
    RAD_ISSUE_N(c, m.op_norm, o, rad_brows(xo, o), rad_w(m.w_norm), rad_brows(xo, o));
    if (m.op_vgather == RAD_NULL_HANDLE) {
        m.head.issue(c, m.op_head, o, rad_brows(xo, o), rad_none(), rad_brows(m.b_logits, o));
        return;
    }
    m.head.issue(c, m.op_head, o, rad_brows(xo, o), rad_none(), rad_brows(m.b_logits_local, o));
    RAD_ISSUE_N(c, m.op_vgather, o, rad_brows(m.b_logits_local, o), rad_brows(m.b_logits, o));
}

}  // namespace family

RAD_ARCH_PLUGIN(family, PLUGIN_NAME, FAMILY_ID, ARCH_QUANT, "0.1", "llama-family decoder (" FAMILY_ID ", quant \"" ARCH_QUANT "\")")
