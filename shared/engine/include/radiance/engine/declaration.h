// declaration.h: what an architecture plugin declared, as the core records it. Declaring is
// the whole of a model's shape: weights, buffers, KV groups, ops (each already resolved against
// the kernel hierarchy), the name map and the logits buffer.
#pragma once
#include <radiance/arch/rad_arch.h>

#include <string>
#include <vector>

#include "radiance/core/selection.h"

namespace radiance::engine {

struct WeightDecl {
    std::string name;
    RadWeightDecl d{};
    std::vector<int64_t> row_parts;
    std::string source;  // the stored tensor it views ("" = its own name)
    std::string planes;
    const std::string& stored_name() const { return source.empty() ? name : source; }
};

struct BufferDecl {
    std::string name;
    RadBufDecl d{};
    std::string derive;
    int first_use = -1;  // op indices bounding its liveness (-1: never used by a declared op)
    int last_use = -1;
};

struct KvGroupDecl {
    std::string name;
    RadKvGroupDecl d{};
    std::vector<int> layers;  // bound layers, in binding order
};

struct OpDecl {
    core::Geometry geom;
    std::vector<rad_weight> weights;
    core::Resolution res;
    bool queried = false;  // the plugin asked rad_op_resolved: an unresolved op is then its choice
};

struct NameMapEntry {
    std::string target;
    int kind = RAD_MAP_COPY;
    std::vector<std::string> sources;
};

struct Declaration {
    std::vector<WeightDecl> weights;
    std::vector<BufferDecl> buffers;
    std::vector<KvGroupDecl> kv_groups;
    std::vector<OpDecl> ops;
    std::vector<NameMapEntry> name_map;
    rad_buf logits = RAD_NULL_HANDLE;
    rad_buf pooled = RAD_NULL_HANDLE;  // rad_declare_pooled: the final normed hidden rows, or none (no embeddings)
    std::vector<std::string> notes;
    std::string failure;  // rad_decl_fail, or a malformed declaration

    const WeightDecl* weight(const std::string& name) const;
};

}  // namespace radiance::engine
