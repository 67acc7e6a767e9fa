// quantised_sources.h: checkpoint tensors a Hugging Face folder stores already quantised (GPTQ,
// AWQ, fp8), as the converter sees them. It knows only how to recognise them; their numbers are
// the `import` quantiser's (plugins/quant/libquant), which reads the stored tensors itself.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "radiance/convert/recipe.h"
#include "radiance/convert/safetensors.h"

namespace radiance::convert {

// The tensor that shows the name map's source `name` ("....q_proj.weight") is stored quantised:
// its `.qweight` (GPTQ, AWQ), or the tensor itself when it is of an fp8 or integer dtype; null for
// a float tensor or an absent one.
const StTensor* stored_quantised(const Checkpoint& ck, const std::string& name);

// The checkpoint tensors that come with a quantised source (qweight, qzeros, scales, g_idx,
// weight_scale, weight_scale_inv, input_scale, ...): the ones the import uses.
std::vector<std::string> quantised_companions(const Checkpoint& ck, const std::string& name);

// The recipe a folder is converted by when none is given: every weight imported as stored
// (`* import`) when config.json has a quantization_config; nullopt without one. Throws
// radiance::Error naming config.json for a quant_method that is not imported.
std::optional<Recipe> import_recipe(const nlohmann::json& cfg, const std::string& config_path);

}  // namespace radiance::convert
