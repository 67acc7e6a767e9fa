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

// generation_config.json's ids that end a generation (eos_token_id: one id or a list, e.g.
// Llama 3.1's <|end_of_text|>, <|eom_id|> and <|eot_id|>), as "gen.eos_token_ids" (comma-
// separated); nothing when it states none. Throws radiance::Error on ids that are not integers.
void add_generation_config(const nlohmann::json& generation_config, std::map<std::string, container::MetaValue>& meta);

}  // namespace radiance::convert
