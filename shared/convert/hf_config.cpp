#include "radiance/convert/hf_config.h"

#include "checked_json.h"

#include "radiance/engine/model_meta.h"
#include "radiance/util/error.h"

#include <cmath>
#include <cstdio>

namespace radiance::convert {

using container::MetaValue;
namespace mk = engine::meta_key;

namespace {

void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, MetaValue>& out) {
    if (j.is_object()) {
        for (auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
        return;
    }
    if (j.is_array()) {
        bool scalars = true;
        for (size_t i = 0; i < j.size(); ++i) {
            flatten(j[i], prefix + "." + std::to_string(i), out);
            scalars = scalars && !j[i].is_structured();
        }
        out[prefix] = MetaValue::of_str(j.dump());
        out[prefix + ".count"] = MetaValue::of_int(static_cast<int64_t>(j.size()));
        return;
    }
    if (j.is_boolean())
        out[prefix] = MetaValue::of_bool(j.get<bool>());
    else if (j.is_number_integer())
        out[prefix] = MetaValue::of_int(j.get<int64_t>());
    else if (j.is_number_float())
        out[prefix] = MetaValue::of_f64(j.get<double>());
    else if (j.is_string())
        out[prefix] = MetaValue::of_str(j.get<std::string>());
    // null: absent
}

// A key the configuration states (present and not null).
bool states(const nlohmann::json& j, const char* k) { return j.contains(k) && !j[k].is_null(); }

// A key's value checked for kind and range, the error naming the key as "WHERE's 'k'".
double real_of(const nlohmann::json& j, const char* k, const std::string& where, bool positive) {
    return checked_real(j[k], where + "'s '" + k + "'", positive);
}
int64_t count_of(const nlohmann::json& j, const char* k, const std::string& where, int64_t lo) {
    return checked_count(j[k], where + "'s '" + k + "'", lo);
}

// rope.* from one rope parameter object (transformers 5's rope_parameters or the older
// rope_scaling), under `prefix`.
void rope_keys(const nlohmann::json& r, const std::string& prefix, std::map<std::string, MetaValue>& out) {
    const std::string where = "config.json's rope parameters";
    auto num = [&](const char* k, const char* as) {
        if (states(r, k)) out[prefix + as] = MetaValue::of_f64(real_of(r, k, where, false));
    };
    if (r.contains("rope_type") && r["rope_type"].is_string())
        out[prefix + "type"] = MetaValue::of_str(r["rope_type"]);
    else if (r.contains("type") && r["type"].is_string())
        out[prefix + "type"] = MetaValue::of_str(r["type"]);
    num("rope_theta", "theta");
    num("factor", "factor");
    num("low_freq_factor", "low_freq_factor");
    num("high_freq_factor", "high_freq_factor");
    num("beta_fast", "beta_fast");
    num("beta_slow", "beta_slow");
    num("attention_factor", "attention_factor");
    if (states(r, "original_max_position_embeddings"))
        out[prefix + "orig_ctx"] = MetaValue::of_int(count_of(r, "original_max_position_embeddings", where, 1));
    if (states(r, "partial_rotary_factor"))
        out["rope.partial_rotary_factor"] = MetaValue::of_f64(real_of(r, "partial_rotary_factor", where, true));
    // longrope's per-frequency factors, as the op reads them: comma-separated, each exact (%.17g)
    for (const char* k : {"short_factor", "long_factor"}) {
        if (!r.contains(k) || !r[k].is_array()) continue;
        std::string list;
        for (const auto& v : r[k]) {
            if (!v.is_number()) throw Error(std::string("rope scaling's ") + k + " holds a value that is not a number");
            char num[32];
            std::snprintf(num, sizeof num, "%.17g", v.get<double>());
            list += (list.empty() ? "" : ",") + std::string(num);
        }
        out[prefix + k] = MetaValue::of_str(list);
    }
}

}  // namespace

// model_type without its underscores; a text-only variant of a multimodal family ("gemma3_text")
// is the family itself, whose plugin also serves the multimodal checkpoint's text tower.
std::string arch_id_of(const nlohmann::json& config) {
    if (!config.contains("model_type") || !config["model_type"].is_string()) throw Error("config.json has no model_type");
    std::string type = config["model_type"].get<std::string>(), id;
    if (type.size() > 5 && type.compare(type.size() - 5, 5, "_text") == 0) type.resize(type.size() - 5);
    for (char c : type)
        if (c != '_') id += c;
    return id;
}

std::map<std::string, MetaValue> metadata_from_config(const nlohmann::json& cfg_raw, const std::string& model_name) {
    // GPT-2's config names its dimensions its own way; transformers maps them (attribute_map).
    nlohmann::json cfg_in = cfg_raw;
    for (auto [ours, theirs] :
         {std::pair{"hidden_size", "n_embd"}, std::pair{"num_hidden_layers", "n_layer"}, std::pair{"num_attention_heads", "n_head"},
          std::pair{"max_position_embeddings", "n_positions"}, std::pair{"intermediate_size", "n_inner"}})
        if (!cfg_in.contains(ours) && cfg_in.contains(theirs) && cfg_in[theirs].is_number_integer()) cfg_in[ours] = cfg_in[theirs];
    // Multimodal configs keep the language model under text_config.
    const nlohmann::json& cfg = cfg_in.contains("text_config") && cfg_in["text_config"].is_object() ? cfg_in["text_config"] : cfg_in;
    std::map<std::string, MetaValue> out;
    flatten(cfg_in, "hf", out);
    if (&cfg != &cfg_in) flatten(cfg, "hf", out);
    // Every key read here that the configuration states must be of its kind and range: a value of
    // another kind is an error naming it, never passed over for a default (an rms_norm_eps of [1]
    // or an intermediate_size of 1e30 once converted silently).
    auto req = [&](const char* k) -> int64_t {
        if (!states(cfg, k)) throw Error("config.json lacks the integer '" + std::string(k) + "'");
        return count_of(cfg, k, "config.json", 1);
    };
    auto opt_i = [&](const char* k, int64_t d) { return states(cfg, k) ? count_of(cfg, k, "config.json", 0) : d; };
    out[mk::arch] = MetaValue::of_str(arch_id_of(cfg_in));
    out[mk::quant] = MetaValue::of_str("");
    out[mk::name] = MetaValue::of_str(model_name);
    const int64_t hidden = req("hidden_size"), heads = req("num_attention_heads");
    out[mk::n_layers] = MetaValue::of_int(req("num_hidden_layers"));
    out[mk::n_embd] = MetaValue::of_int(hidden);
    out[mk::n_head] = MetaValue::of_int(heads);
    out[mk::n_head_kv] = MetaValue::of_int(opt_i("num_key_value_heads", heads));
    // What the checkpoint means by head_dim: its own value, else transformers' default. Model code
    // reads this key and never derives it again.
    if (!states(cfg, "head_dim") && hidden < heads)
        throw Error("config.json's hidden_size " + std::to_string(hidden) + " is smaller than its num_attention_heads " + std::to_string(heads) +
                    " and it states no head_dim");
    out[mk::head_dim] = MetaValue::of_int(states(cfg, "head_dim") ? count_of(cfg, "head_dim", "config.json", 1) : hidden / heads);
    out[mk::n_ff] = MetaValue::of_int(opt_i("intermediate_size", 0));
    out[mk::n_vocab] = MetaValue::of_int(req("vocab_size"));
    out[mk::n_ctx_train] = MetaValue::of_int(opt_i("max_position_embeddings", 0));
    for (const char* k : {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon"})
        if (states(cfg, k)) {
            out[mk::rms_eps] = MetaValue::of_f64(real_of(cfg, k, "config.json", true));
            break;
        }
    out[mk::n_expert] = MetaValue::of_int(opt_i("num_local_experts", opt_i("num_experts", 0)));
    out[mk::n_expert_used] = MetaValue::of_int(opt_i("num_experts_per_tok", 0));

    // Rope: transformers 5 writes rope_parameters (possibly one set per layer type); older configs
    // rope_theta plus rope_scaling.
    const double theta = states(cfg, "rope_theta") ? real_of(cfg, "rope_theta", "config.json", true) : 10000.0;
    if (cfg.contains("rope_parameters") && cfg["rope_parameters"].is_object()) {
        const auto& rp = cfg["rope_parameters"];
        if (rp.contains("rope_type") || rp.contains("rope_theta")) {
            rope_keys(rp, "rope.", out);
        } else {
            for (auto& [kind, sub] : rp.items())
                if (sub.is_object()) rope_keys(sub, "rope." + kind + ".", out);
            if (rp.contains("full_attention")) rope_keys(rp["full_attention"], "rope.", out);
        }
    }
    if (cfg.contains("rope_scaling") && cfg["rope_scaling"].is_object()) rope_keys(cfg["rope_scaling"], "rope.", out);
    // Phi-3 states its pretrained length beside the rope settings, not among them
    if (!out.count("rope.orig_ctx") && states(cfg, "original_max_position_embeddings"))
        out["rope.orig_ctx"] = MetaValue::of_int(count_of(cfg, "original_max_position_embeddings", "config.json", 1));
    if (!out.count("rope.theta")) out["rope.theta"] = MetaValue::of_f64(theta);
    out[mk::rope_theta] = out["rope.theta"];
    if (!out.count("rope.partial_rotary_factor") && states(cfg, "partial_rotary_factor"))
        out["rope.partial_rotary_factor"] = MetaValue::of_f64(real_of(cfg, "partial_rotary_factor", "config.json", true));
    return out;
}

void add_generation_config(const nlohmann::json& g, std::map<std::string, MetaValue>& meta) {
    if (!g.is_object() || !g.contains("eos_token_id") || g["eos_token_id"].is_null()) return;
    const nlohmann::json& e = g["eos_token_id"];
    std::string ids;
    for (const auto& v : e.is_array() ? e : nlohmann::json::array({e})) {
        if (!v.is_number_integer() || v.get<int64_t>() < 0)
            throw Error("generation_config.json: eos_token_id holds " + v.dump() + ", not a token id");
        ids += (ids.empty() ? "" : ",") + std::to_string(v.get<int64_t>());
    }
    if (!ids.empty()) meta["gen.eos_token_ids"] = MetaValue::of_str(ids);
}

}  // namespace radiance::convert
