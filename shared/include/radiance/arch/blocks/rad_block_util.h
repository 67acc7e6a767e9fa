// rad_block_util.h: small declaration helpers shared by the header-only blocks (C++ plugins only).
#pragma once
#include <radiance/arch/rad_arch.h>

#include <string>
#include <vector>

namespace radblk {

inline RadBufDecl buf2(int dtype, int64_t rows, int64_t cols) {
    RadBufDecl d{};
    d.dtype = dtype;
    d.rank = 2;
    d.shape[0] = rows;
    d.shape[1] = cols;
    d.kind = RAD_BUF_TRANSIENT;
    return d;
}

inline RadWeightDecl weight(int64_t rows, int64_t cols, int shard, int group, int access = RAD_ACCESS_PER_TOKEN) {
    RadWeightDecl d{};
    d.dtype = RAD_DT_NONE;  // as stored; the kernels are told the dtype through `wdtype`
    d.rank = cols > 0 ? 2 : 1;
    d.shape[0] = rows;
    d.shape[1] = cols > 0 ? cols : 0;
    d.access = access;
    d.shard = shard;
    d.group = group;
    return d;
}

// The stored dtype of a declared weight as an op's `wdtype` text.
inline const char* wdtype(RadBuilder* b, rad_weight w) {
    RadEncoding e;
    if (rad_weight_encoding(b, w, &e) != RAD_OK) return "bf16";
    return rad_dtype_name(e.planes[0].dtype);
}

// A name map entry whose source strings live as long as the builder call.
inline void map(RadBuilder* b, const std::string& target, int kind, const std::vector<std::string>& sources) {
    std::vector<const char*> s;
    for (auto& x : sources) s.push_back(x.c_str());
    RadNameMapEntry e{target.c_str(), kind, static_cast<int32_t>(s.size()), s.data()};
    rad_decl_name_map(b, &e, 1);
}

inline rad_op op(RadBuilder* b, const char* name, std::initializer_list<RadParamDecl> params,
                 std::initializer_list<rad_weight> weights = {}) {
    return rad_decl_op(b, name, params.begin(), static_cast<int>(params.size()), weights.begin(), static_cast<int>(weights.size()));
}

inline void uses(RadBuilder* b, rad_op h, std::initializer_list<rad_buf> reads, std::initializer_list<rad_buf> writes) {
    rad_op_reads(b, h, reads.begin(), static_cast<int>(reads.size()));
    rad_op_writes(b, h, writes.begin(), static_cast<int>(writes.size()));
}

// A weight read by an op that takes plain weights only (an embedding, a norm, a bias): false, and
// the declaration failed naming the weight and its encoding, when the container stores it otherwise.
inline bool require_plain(RadBuilder* b, rad_weight w, const std::string& name) {
    RadEncoding e;
    if (rad_weight_encoding(b, w, &e) != RAD_OK || std::string(e.scheme) == "plain") return true;
    rad_decl_fail(
        b, ("weight '" + name + "' is stored in encoding '" + e.scheme + "' (codes " + rad_dtype_name(e.planes[0].dtype) +
            "), but the op that reads it takes plain weights only: keep it plain in the recipe (e.g. `" + name + " cast dtype=bf16`)")
               .c_str());
    return false;
}

inline bool meta_true(const RadModelMeta* m, const std::string& key) { return rad_meta_geti(m, key.c_str(), 0) != 0; }

}  // namespace radblk
