// st_pooling.h: how a sentence-transformers folder pools and whether it normalises, read at
// conversion into the container's metadata, where the front end finds it (it never reads the
// folder): `embedding.pooling` ("last" or "mean") and `embedding.normalize` (true or false).
#pragma once
#include <filesystem>
#include <map>
#include <string>

#include "radiance/container/container.h"

namespace radiance::convert {

// From modules.json (the Pooling module's folder, else 1_Pooling) and its config.json:
// pooling_mode_lasttoken -> "last", pooling_mode_mean_tokens -> "mean" (a mode we do not serve, CLS
// or max, or several at once, is an error naming it); a Normalize module in modules.json -> normalize true, else false.
// A folder without sentence-transformers files adds nothing (the server's defaults then apply:
// last token, normalised).
void read_st_pooling(const std::filesystem::path& folder, std::map<std::string, container::MetaValue>& meta);

}  // namespace radiance::convert
