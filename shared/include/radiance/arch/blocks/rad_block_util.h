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

// A layer's closing projection of `in` into `out`: a plain gemm, or with add (the model's decode
// fusions) gemm_add, which adds into `out`, the residual stream, and must resolve (the model
// checked that a library serves it; a layer whose weights differ fails naming `what`).
inline rad_op out_projection(RadBuilder* b, bool add, int64_t max_tok, int64_t N, int64_t K, rad_weight w, rad_buf in, rad_buf out,
                             const std::string& what) {
    rad_op h = op(b, add ? "gemm_add" : "gemm",
                  {RAD_RANGE("M", 1, max_tok), RAD_INT("N", N), RAD_INT("K", K), RAD_STR("wdtype", wdtype(b, w))}, {w});
    if (!add) {
        uses(b, h, {in}, {out});
        return h;
    }
    if (!rad_op_resolved(b, h)) rad_decl_fail(b, ("gemm_add does not resolve for " + what).c_str());
    uses(b, h, {in, out}, {out});
    return h;
}

inline bool meta_true(const RadModelMeta* m, const std::string& key) { return rad_meta_geti(m, key.c_str(), 0) != 0; }

}  // namespace radblk
