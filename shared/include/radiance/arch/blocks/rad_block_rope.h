// rad_block_rope.h: the rope parameters of a model, read from the converter's normalised keys
// (rope.type, rope.factor, ...), and the op parameters they become.
#pragma once
#include <string>
#include <vector>

#include "rad_block_util.h"

namespace radblk {

struct Rope {
    double theta = 10000.0;
    std::string type = "none";  // none | linear | llama3 | yarn
    std::string layout = "neox";
    double factor = 1.0, low = 1.0, high = 4.0, beta_fast = 32.0, beta_slow = 1.0, attn_factor = 0.0;
    int64_t orig_ctx = 0;
    int64_t rot_dim = 0;

    // `prefix` selects a per-layer-type set (e.g. "rope.sliding_attention.") when the model has one.
    static Rope from_meta(const RadModelMeta* m, int64_t head_dim, const std::string& prefix = "rope.") {
        Rope r;
        r.theta = rad_meta_getf(m, (prefix + "theta").c_str(), m->rope_theta > 0 ? m->rope_theta : 10000.0);
        r.type = rad_meta_gets(m, (prefix + "type").c_str(), "none");
        if (r.type == "default") r.type = "none";
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
        return r;
    }

    bool supported(std::string* why) const {
        if (type == "none" || type == "linear" || type == "llama3" || type == "yarn") return true;
        *why = "rope scaling '" + type + "' is not supported";
        return false;
    }

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
    }
};

}  // namespace radblk
