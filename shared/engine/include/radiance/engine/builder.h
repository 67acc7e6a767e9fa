// builder.h: the engine side of RadBuilder. Runs an architecture plugin's declare and records
// what it declares, resolving each op against the kernel hierarchy as it is declared (so the
// plugin can ask rad_op_resolved to choose between a fused op and its chain).
#pragma once
#include <functional>
#include <optional>

#include "radiance/core/registry.h"
#include "radiance/core/selection.h"
#include "radiance/engine/declaration.h"
#include "radiance/engine/model_meta.h"

namespace radiance::engine {

// Answers rad_weight_encoding: the stored encoding of a tensor (nullopt if not stored). A converter
// answers from the name map declared so far, which it receives too.
using EncodingLookup = std::function<std::optional<RadEncoding>(const std::string& stored_name, const std::vector<NameMapEntry>& name_map)>;

struct DeclareOptions {
    RadBuildCtx ctx{};
    core::SelectOptions select;
    EncodingLookup encoding;
};

// Runs `arch.declare` and returns what it declared. Throws radiance::Error when the plugin fails
// the declare (rad_decl_fail or a non-zero return), naming the plugin and its reason.
Declaration declare(const core::ArchPlugin& arch, const core::Registry& reg, const ModelMeta& meta, const DeclareOptions& opts);

}  // namespace radiance::engine
