#include "radiance/engine/model_meta.h"

#include <cstdlib>

namespace radiance::engine {

ModelMeta::ModelMeta(std::map<std::string, std::string> kv) : kv_(std::move(kv)) {
    // The string fields exist (possibly empty) before pointers into the map are taken.
    for (const char* k : {meta_key::arch, meta_key::name, meta_key::quant}) kv_.try_emplace(k, "");
    auto i = [&](const char* key) -> int64_t {
        auto it = kv_.find(key);
        return it == kv_.end() ? 0 : std::strtoll(it->second.c_str(), nullptr, 10);
    };
    auto f = [&](const char* key) -> double {
        auto it = kv_.find(key);
        return it == kv_.end() ? 0.0 : std::strtod(it->second.c_str(), nullptr);
    };
    meta_.struct_size = sizeof meta_;
    meta_.n_layers = static_cast<int32_t>(i(meta_key::n_layers));
    meta_.n_embd = i(meta_key::n_embd);
    meta_.n_head = i(meta_key::n_head);
    meta_.n_head_kv = i(meta_key::n_head_kv);
    meta_.head_dim = i(meta_key::head_dim);
    meta_.n_ff = i(meta_key::n_ff);
    meta_.n_vocab = i(meta_key::n_vocab);
    meta_.n_ctx_train = i(meta_key::n_ctx_train);
    meta_.n_expert = i(meta_key::n_expert);
    meta_.n_expert_used = i(meta_key::n_expert_used);
    meta_.rms_eps = f(meta_key::rms_eps);
    meta_.rope_theta = f(meta_key::rope_theta);
    for (auto& [k, v] : kv_) {
        keys_.push_back(k.c_str());
        vals_.push_back(v.c_str());
    }
    meta_.kv_key = keys_.data();
    meta_.kv_val = vals_.data();
    meta_.n_kv = static_cast<int32_t>(keys_.size());
    meta_.arch_id = kv_.at(meta_key::arch).c_str();
    meta_.name = kv_.at(meta_key::name).c_str();
    meta_.quant = kv_.at(meta_key::quant).c_str();
}

std::string ModelMeta::value(const std::string& key, const std::string& dflt) const {
    auto it = kv_.find(key);
    return it == kv_.end() ? dflt : it->second;
}

}  // namespace radiance::engine
