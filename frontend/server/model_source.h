// model_source.h: what `--model` names, as a container path. A `.rad` is used as it is; a Hugging
// Face folder is converted once into the cache (keyed by the folder's path, sizes and times) and
// reused after.
#pragma once
#include <string>

#include "radiance/core/registry.h"

namespace radiance::frontend {

// The default model when --model is absent: the demo model installed beside the binaries
// (<home>/models/demo), or "" if there is none.
std::string default_model(const std::vector<std::string>& homes);

// Returns a container path for `spec`; converts a folder into `cache_dir` when needed.
std::string resolve_model(const std::string& spec, const core::Registry& reg, const std::string& cache_dir);

}  // namespace radiance::frontend
