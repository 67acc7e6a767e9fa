// hf_config.h: a Hugging Face config.json as the container's metadata. Generic HF conventions
// only (dimension names, rope parameter spellings); nothing here knows a model family.
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "radiance/container/container.h"

namespace radiance::convert {

// The architecture id: config.json's model_type without underscores.
std::string arch_id_of(const nlohmann::json& config);

// Metadata: the model.* and rope.* keys the engine reads, plus every config entry flattened under
// hf.* (nested keys joined with '.', list elements as .0, .1, ...). Throws radiance::Error naming
// a missing required key.
std::map<std::string, container::MetaValue> metadata_from_config(const nlohmann::json& config, const std::string& model_name);

}  // namespace radiance::convert
