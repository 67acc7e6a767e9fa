// model_meta.h: RadModelMeta built from a container's metadata (or from a checkpoint's config at
// conversion). Owns the strings RadModelMeta points at.
#pragma once
#include <radiance/arch/rad_arch.h>

#include <map>
#include <string>
#include <vector>

namespace radiance::engine {

// Keys the converter writes and the engine reads; everything else travels as text.
namespace meta_key {
inline constexpr const char* arch = "arch.id";
inline constexpr const char* quant = "arch.quant";
inline constexpr const char* name = "model.name";
inline constexpr const char* n_layers = "model.n_layers";
inline constexpr const char* n_embd = "model.n_embd";
inline constexpr const char* n_head = "model.n_head";
inline constexpr const char* n_head_kv = "model.n_head_kv";
inline constexpr const char* head_dim = "model.head_dim";
inline constexpr const char* n_ff = "model.n_ff";
inline constexpr const char* n_vocab = "model.n_vocab";
inline constexpr const char* n_ctx_train = "model.n_ctx_train";
inline constexpr const char* rms_eps = "model.rms_eps";
inline constexpr const char* rope_theta = "model.rope_theta";
inline constexpr const char* n_expert = "model.n_expert";
inline constexpr const char* n_expert_used = "model.n_expert_used";
}  // namespace meta_key

class ModelMeta {
public:
    explicit ModelMeta(std::map<std::string, std::string> kv);
    ModelMeta(const ModelMeta&) = delete;
    ModelMeta& operator=(const ModelMeta&) = delete;
    const RadModelMeta* get() const { return &meta_; }
    const std::map<std::string, std::string>& kv() const { return kv_; }
    std::string value(const std::string& key, const std::string& dflt = "") const;

private:
    std::map<std::string, std::string> kv_;
    std::vector<const char*> keys_, vals_;
    RadModelMeta meta_{};
};

}  // namespace radiance::engine
