// import_source.h: what the import quantiser knows of one checkpoint linear (or plain tensor) it
// takes rows of a weight from: its format, the stored tensors, and element access in the weight's
// logical [N = out_features, K = in_features] coordinates. Each format's file (import_int4.cpp,
// import_fp8.cpp) fills a Source from the checkpoint and config, refusing what it cannot import
// exactly; import.cpp assembles a weight's Sources into the affine scheme's planes.
#pragma once
#include <radiance/rad_decode.h>

#include <cstdint>
#include <string>
#include <vector>

#include "hf_checkpoint.h"

namespace quant {

enum class SourceFormat {
    Plain,  // a float tensor, stored as it is
    Gptq,   // int4 qweight packed along K, qzeros along N, f16 scales per group of K, g_idx
    Awq,    // int4 qweight packed along N in the AWQ order, qzeros likewise, f16 scales per group
    Fp8,    // fp8 e4m3 (or int8) codes [N, K] times a scale per block, channel or tensor
};

struct Source {
    std::string what;  // "model.layers.0.self_attn.q_proj" (the prefix) or the plain tensor's name
    SourceFormat format = SourceFormat::Plain;
    int64_t row0 = 0, rows = 0, cols = 0;  // the weight's rows [row0, row0 + rows) come from here
    // int4: the packed tensors; fp8: `codes` the weight, `scales` its scale tensor; plain: `codes`
    const HfTensor *codes = nullptr, *zeros = nullptr, *scales = nullptr, *g_idx = nullptr;
    int code_dtype = RAD_DT_NONE;      // RadDType of one code (u4, fp8_e4m3, i8) or of the plain tensor
    int scale_dtype = RAD_DT_NONE;     // RadDType of the stored scales
    int64_t group = 0;                 // int4: K values a scale covers
    int64_t block_r = 0, block_c = 0;  // fp8: the rows / columns one stored scale covers (0: all)
    bool zero_plus_one = false;        // GPTQ's original format stores each zero point minus one
    bool zero_is_8 = false;            // int4: every zero point is 8 (a symmetric checkpoint)
    // GPTQ act-order: stored column j is the checkpoint's column perm[j] (a stable sort of the
    // columns by g_idx, so each group's columns are contiguous); empty when g_idx is k / group
    std::vector<int32_t> perm;

    // Element (n, k) of the weight as this source stores it, n relative to row0, k a stored column
    // (the checkpoint's column perm[k] under act-order).
    uint32_t code(int64_t n, int64_t k) const;
    uint32_t zero(int64_t n, int64_t k) const;  // int4 only
    float scale(int64_t n, int64_t k) const;    // exactly the stored value, widened to f32
};

// Fills `out` for the checkpoint linear `prefix` (its tensors `prefix`.qweight, ...) of an int4
// GPTQ / AWQ checkpoint, or says why not (the weight's tensor, field and file) in `why`.
bool describe_gptq(const HfCheckpoint& ck, const std::string& prefix, Source* out, std::string* why);
bool describe_awq(const HfCheckpoint& ck, const std::string& prefix, Source* out, std::string* why);
// The same for an fp8 (fine-grained or compressed-tensors) or int8 compressed-tensors linear.
bool describe_fp8(const HfCheckpoint& ck, const std::string& prefix, Source* out, std::string* why);

// A little-endian element of a stored tensor (its bytes are as the file has them).
inline int32_t st_i32(const HfTensor& t, int64_t i) {
    int32_t v;
    __builtin_memcpy(&v, t.data + 4 * i, 4);
    return v;
}

// "shape [a, b]" for messages.
std::string st_shape(const HfTensor& t);

}  // namespace quant
