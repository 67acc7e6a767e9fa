// rad_block_rope.h: the rope parameters of a model, read from the converter's normalised keys
// (rope.type, rope.factor, ...), and the op parameters they become.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "rad_block_util.h"

namespace radblk {

struct Rope {
    double theta = 10000.0;
    std::string type = "none";  // none | linear | llama3 | yarn | longrope
    std::string layout = "neox";
    double factor = 1.0, low = 1.0, high = 4.0, beta_fast = 32.0, beta_slow = 1.0, attn_factor = 0.0;
    int64_t orig_ctx = 0;
    int64_t rot_dim = 0;
    std::string short_factor, long_factor;  // longrope: rot_dim / 2 comma-separated factors each

    // `prefix` selects a per-layer-type set (e.g. "rope.sliding_attention.") when the model has one.
    static Rope from_meta(const RadModelMeta* m, int64_t head_dim, const std::string& prefix = "rope.") {
        Rope r;
        r.theta = rad_meta_getf(m, (prefix + "theta").c_str(), m->rope_theta > 0 ? m->rope_theta : 10000.0);
        r.type = rad_meta_gets(m, (prefix + "type").c_str(), "none");
        if (r.type == "default") r.type = "none";
        if (r.type == "su") r.type = "longrope";  // Phi-3's first name for it, as transformers reads it
        r.factor = rad_meta_getf(m, (prefix + "factor").c_str(), 1.0);
        r.low = rad_meta_getf(m, (prefix + "low_freq_factor").c_str(), 1.0);
        r.high = rad_meta_getf(m, (prefix + "high_freq_factor").c_str(), 4.0);
        r.beta_fast = rad_meta_getf(m, (prefix + "beta_fast").c_str(), 32.0);
        r.beta_slow = rad_meta_getf(m, (prefix + "beta_slow").c_str(), 1.0);
        r.attn_factor = rad_meta_getf(m, (prefix + "attention_factor").c_str(), 0.0);
        r.orig_ctx = rad_meta_geti(m, (prefix + "orig_ctx").c_str(), m->n_ctx_train);
        double partial = rad_meta_getf(m, "rope.partial_rotary_factor", 1.0);
        r.rot_dim = static_cast<int64_t>(static_cast<double>(head_dim) * partial);
        r.layout = rad_meta_gets(m, "rope.layout", "neox");
        if (r.type == "longrope") {
            r.short_factor = rad_meta_gets(m, (prefix + "short_factor").c_str(), "");
            r.long_factor = rad_meta_gets(m, (prefix + "long_factor").c_str(), "");
            // transformers: factor from the config, else the ratio of the lengths; the attention
            // factor from the config, else sqrt(1 + ln(factor) / ln(orig_ctx)) past a factor of 1
            if (!rad_meta_has(m, (prefix + "factor").c_str()) && r.orig_ctx > 0)
                r.factor = static_cast<double>(m->n_ctx_train) / static_cast<double>(r.orig_ctx);
            if (r.attn_factor <= 0)
                r.attn_factor = r.factor <= 1.0 ? 1.0 : std::sqrt(1.0 + std::log(r.factor) / std::log(static_cast<double>(r.orig_ctx)));
        }
        return r;
    }

    bool supported(std::string* why) const {
        if (type == "longrope") {
            const int64_t half = rot_dim / 2;
            if (orig_ctx <= 0) {
                *why = "rope scaling 'longrope' needs original_max_position_embeddings";
                return false;
            }
            if (count(short_factor) != half || count(long_factor) != half) {
                *why = "rope scaling 'longrope' needs short_factor and long_factor of " + std::to_string(half) +
                       " numbers each (rot_dim / 2), the config has " + std::to_string(count(short_factor)) + " and " +
                       std::to_string(count(long_factor));
                return false;
            }
            return true;
        }
        if (type == "none" || type == "linear" || type == "llama3" || type == "yarn") return true;
        *why = "rope scaling '" + type + "' is not supported";
        return false;
    }

    // Whether the op reads each row's sequence (cu_seqlens): longrope's choice of factors.
    bool per_sequence() const { return type == "longrope"; }

    rad_op declare_op(RadBuilder* b, int64_t max_tok, int64_t heads, int64_t head_dim) const {
        std::vector<RadParamDecl> p = {RAD_RANGE("n", 1, max_tok), RAD_INT("n_head", heads), RAD_INT("head_dim", head_dim)};
        append_rotation(p);
        return rad_decl_op(b, "rope", p.data(), static_cast<int>(p.size()), nullptr, 0);
    }

    // rope's parameters past its row count and heads (which an op such as rope_attention names for
    // itself); the strings point into this object.
    void append_rotation(std::vector<RadParamDecl>& p) const {
        p.insert(p.end(), {RAD_INT("rot_dim", rot_dim), RAD_F64("theta", theta), RAD_STR("layout", layout.c_str()),
                           RAD_STR("scaling", type.c_str())});
        if (type != "none") {
            p.push_back(RAD_F64("factor", factor));
            p.push_back(RAD_INT("orig_ctx", orig_ctx));
        }
        if (type == "llama3") {
            p.push_back(RAD_F64("low_freq_factor", low));
            p.push_back(RAD_F64("high_freq_factor", high));
        }
        if (type == "yarn") {
            p.push_back(RAD_F64("beta_fast", beta_fast));
            p.push_back(RAD_F64("beta_slow", beta_slow));
            if (attn_factor > 0) p.push_back(RAD_F64("attn_factor", attn_factor));
        }
        if (type == "longrope") {
            p.push_back(RAD_F64("attn_factor", attn_factor));
            p.push_back(RAD_STR("short_factor", short_factor.c_str()));
            p.push_back(RAD_STR("long_factor", long_factor.c_str()));
        }
    }

private:
    static int64_t count(const std::string& list) {
        if (list.empty()) return 0;
        int64_t n = 1;
        for (char ch : list) n += ch == ',';
        return n;
    }
};

}  // namespace radblk
