// model_source.h: what `--model` names, as a container path. A `.rad` is used as it is; a Hugging
// Face folder is converted once into the cache (keyed by the folder's path, sizes and times) and
// reused after. Converting runs the architecture plugin's declare, so it happens in a rad-convert
// child process: the front end opens no plugin.
#pragma once
#include <string>
#include <vector>

namespace radiance::frontend {

// The default model when --model is absent: the demo model installed beside the binaries
// (<home>/models/demo), or "" if there is none.
std::string default_model(const std::vector<std::string>& homes);

// Returns a container path for `spec`; converts a folder into `cache_dir` when needed, with the
// rad-convert beside this executable, given `homes` (a --radiance-home value, "" for the default).
// Throws radiance::Error with rad-convert's own words when it fails.
std::string resolve_model(const std::string& spec, const std::string& homes, const std::string& cache_dir);

}  // namespace radiance::frontend
