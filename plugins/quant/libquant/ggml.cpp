// ggml: a weight imported from a GGUF file's tensor of the same name, its numbers as stored there
// (recipe option file=PATH), rather than quantised from the checkpoint's: F32, F16 and BF16 as
// plain floats, the block types (ggml_blocks.h says how each is laid out) as the affine scheme's
// canonical planes, exactly (ggml's dequantisation and the core decoder's agree to the bit):
//
//   Q8_0  codes i8,                 scale f16 per [1 x 32]
//   Q4_0  codes i4 (the nibble - 8), scale f16 per [1 x 32]
//   Q4_1  codes u4,                 scale f16 (d) and min f16 (-m) per [1 x 32]
//   Q5_0  codes i8 (q - 16),        scale f16 per [1 x 32]
//   Q5_1  codes u8 (0-31),          scale f16 (d) and min f16 (-m) per [1 x 32]
//   Q4_K  codes u4,                 scale f32 (d * sc) and min f32 (dmin * m) per [1 x 32]
//   Q5_K  codes u8 (0-31: no 5-bit dtype yet), scale and min as Q4_K's
//   Q6_K  codes i8 (q - 32),        scale f32 (d * sc) per [1 x 16]
//
// The K-quants' two scale levels (6-bit integers times an f16 per 256) are folded into one f32
// level: exact, and gemm_q's one scale plane, at 1.5 (Q4_K) to 4.5 (Q5_K, whose 5-bit codes take a
// byte) bits a value more than ggml's (docs/container.md's table).
//
// The container's names are llama.cpp's (blk.N.attn_q.weight, ...), so a weight is found by its own
// name; the fused projections the llama family stores are assembled from their parts
// (attn_qkv <- attn_q, attn_k, attn_v; ffn_gate_up <- ffn_gate, ffn_up), rows concatenated. Parts
// of different block types (a Q4_K_M file's Q6_K attn_v beside Q4_K q and k) share one encoding
// wide enough for each exactly: i8 codes, the finest grouping, an f32 scale, a min if any part has
// one (0 for the parts without). llama.cpp's converter reorders a llama's q and k rows for its
// rotation (per head, row a * hd/2 + b -> 2b + a); for general.architecture "llama" that is undone
// here. The checkpoint's own values still arrive (the converter's error report measures the import
// against them) and are not otherwise used. Other ggml types (Q2_K, Q3_K, IQ*, ...), and a block
// type whose rows are not whole blocks, are refused naming the tensor, its type and the file.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "ggml_blocks.h"
#include "gguf_file.h"
#include "options.h"
#include "quantizers.h"

namespace quant {
namespace {

const RadQuantOption kOptions[] = {
    {"file", RAD_P_STR, 0, "", "the GGUF file whose tensors are imported (required)"},
};
constexpr int kNOptions = sizeof kOptions / sizeof kOptions[0];

// One GGUF tensor contributing rows [row0, row0 + t->rows) of the weight; heads > 0: its rows are
// in llama.cpp's rotated order over that many heads.
struct Part {
    const GgufTensor* t;
    int64_t row0, heads;
};

// What a refusal says, on stderr: the converter names the recipe line and the weight, this names
// the GGUF side (its tensor, type and file).
int refuse(int rc, const std::string& why) {
    std::fprintf(stderr, "ggml: %s\n", why.c_str());
    return rc;
}

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The GGUF tensors that make weight `name` of [rows x cols], or a refusal.
int parts_of(const GgufFile& f, const std::string& name, int64_t rows, int64_t cols, std::vector<Part>* out) {
    std::vector<std::string> names{name};
    if (!f.find(name)) {
        for (const char* fused : {"attn_qkv", "ffn_gate_up"}) {
            const std::string mid = std::string(".") + fused + ".";
            const size_t at = name.find(mid);
            if (at == std::string::npos) continue;
            const std::string head = name.substr(0, at + 1), tail = name.substr(at + mid.size() - 1);
            names = std::string(fused) == "attn_qkv"
                        ? std::vector<std::string>{head + "attn_q" + tail, head + "attn_k" + tail, head + "attn_v" + tail}
                        : std::vector<std::string>{head + "ffn_gate" + tail, head + "ffn_up" + tail};
        }
    }
    const std::string arch = f.str("general.architecture");
    int64_t row0 = 0;
    for (const std::string& n : names) {
        const GgufTensor* t = f.find(n);
        if (!t) return refuse(RAD_E_SHAPE, "weight '" + name + "': " + f.path() + " has no tensor '" + n + "'");
        if (t->cols != cols)
            return refuse(RAD_E_SHAPE, "tensor '" + n + "' of " + f.path() + " has rows of " + std::to_string(t->cols) +
                                           " values, weight '" + name + "' of " + std::to_string(cols));
        if (!t->row_bytes && is_block_type(t->type))
            return refuse(RAD_E_SHAPE, "tensor '" + n + "' of " + f.path() + " is " + ggml_type_name(t->type) + " with rows of " +
                                           std::to_string(t->cols) + " values, not whole blocks of " +
                                           std::to_string(block_values(t->type)));
        if (!t->row_bytes)
            return refuse(RAD_E_UNSUPPORTED, "tensor '" + n + "' of " + f.path() + " is " + ggml_type_name(t->type) +
                                                 ", which is not imported (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K)");
        const uint32_t t0 = f.find(names[0])->type;
        if (t->type != t0 && !(is_block_type(t->type) && is_block_type(t0)))
            return refuse(RAD_E_UNSUPPORTED, "the parts of weight '" + name + "' in " + f.path() + " differ in type (" +
                                                 ggml_type_name(t0) + ", " + ggml_type_name(t->type) + ")");
        int64_t heads = 0;
        if (arch == "llama" && (ends_with(n, "attn_q.weight") || ends_with(n, "attn_k.weight"))) {
            const std::string key = ends_with(n, "attn_q.weight") ? "llama.attention.head_count" : "llama.attention.head_count_kv";
            heads = f.integer(key, f.integer("llama.attention.head_count", 0));
            if (heads <= 0 || t->rows % (2 * heads) != 0)
                return refuse(RAD_E_SHAPE, "tensor '" + n + "' of " + f.path() + ": " + key + " does not split its " +
                                               std::to_string(t->rows) + " rows into heads");
        }
        out->push_back(Part{t, row0, heads});
        row0 += t->rows;
    }
    if (row0 != rows)
        return refuse(RAD_E_SHAPE, "weight '" + name + "' has " + std::to_string(rows) + " rows, " + f.path() + "'s tensors for it " +
                                       std::to_string(row0));
    return RAD_OK;
}

int file_of(const char* const* keys, const char* const* vals, int n, const GgufFile** f) {
    const Options o(kOptions, kNOptions, keys, vals, n);
    if (!o.known() || o.text("file").empty()) return RAD_E_ARG;
    std::string err;
    *f = GgufFile::open(o.text("file"), &err);
    return *f ? RAD_OK : refuse(RAD_E_ARG, err);
}

// The affine planes a weight of block-type parts is written in: each type's own (the table above),
// or, for parts of different types, one that holds every part exactly.
struct Planes {
    int codes, sdtype;
    int64_t group;  // columns a scale covers
    bool min;
};

Planes planes_of(uint32_t type) {
    switch (type) {
    case kGgmlQ8_0: return {RAD_I8, RAD_F16, 32, false};
    case kGgmlQ4_0: return {RAD_I4, RAD_F16, 32, false};
    case kGgmlQ4_1: return {RAD_U4, RAD_F16, 32, true};
    case kGgmlQ5_0: return {RAD_I8, RAD_F16, 32, false};
    case kGgmlQ5_1: return {RAD_U8, RAD_F16, 32, true};
    case kGgmlQ4_K: return {RAD_U4, RAD_F32, 32, true};
    case kGgmlQ5_K: return {RAD_U8, RAD_F32, 32, true};
    default: return {RAD_I8, RAD_F32, 16, false};  // Q6_K
    }
}

Planes planes_of(const std::vector<Part>& parts) {
    Planes p = planes_of(parts[0].t->type);
    for (const Part& part : parts) {
        const Planes q = planes_of(part.t->type);
        if (q.codes != p.codes) p.codes = RAD_I8;  // every block type's codes lie in [-128, 127]
        if (q.sdtype == RAD_F32) p.sdtype = RAD_F32;
        p.group = std::min(p.group, q.group);
        p.min = p.min || q.min;
    }
    return p;
}

int encoding(const char* name, int64_t rows, int64_t cols, const char* const* keys, const char* const* vals, int n, RadEncoding* out) {
    const GgufFile* f = nullptr;
    std::vector<Part> parts;
    if (int rc = file_of(keys, vals, n, &f); rc != RAD_OK) return rc;
    if (int rc = parts_of(*f, name, rows, cols, &parts); rc != RAD_OK) return rc;
    switch (parts[0].t->type) {
    case kGgmlF32: *out = rad_encoding_plain(RAD_F32); break;
    case kGgmlF16: *out = rad_encoding_plain(RAD_F16); break;
    case kGgmlBF16: *out = rad_encoding_plain(RAD_BF16); break;
    default: {
        const Planes p = planes_of(parts);
        *out = rad_encoding_affine(p.codes);
        rad_encoding_add_tiled(out, "scale", p.sdtype, 1, p.group);
        if (p.min) rad_encoding_add_tiled(out, "min", p.sdtype, 1, p.group);
    }
    }
    return RAD_OK;
}

int64_t row_block(const RadEncoding*, int64_t, int64_t cols) { return rows_per_block(cols, 1); }

// The GGUF row holding weight row r of `p` (r relative to the part): llama.cpp's rotated order
// puts row a * half + b of a head at 2b + a.
int64_t gguf_row(const Part& p, int64_t r) {
    if (!p.heads) return r;
    const int64_t hd = p.t->rows / p.heads, half = hd / 2, h = r / hd, a = (r % hd) / half, b = (r % hd) % half;
    return h * hd + 2 * b + a;
}

// One GGUF row of block-type blocks into a row of each plane of `enc` (planes_of's): codes as the
// plane's dtype (the bit stream, lowest bits first), a scale and a min per group, each copied from
// the unpacked per-16 values exactly (an f16 scale back to its own bits).
void write_row(const RadEncoding* enc, uint32_t type, const uint8_t* src, int64_t cols, uint8_t* const* rows) {
    static thread_local std::vector<int8_t> q;
    static thread_local std::vector<float> s, m;
    q.resize(static_cast<size_t>(cols));
    s.resize(static_cast<size_t>(cols / 16));
    m.resize(static_cast<size_t>(cols / 16));
    unpack_row(type, src, cols, q.data(), s.data(), m.data());
    const int cdt = enc->planes[0].dtype;
    for (int64_t j = 0; j < cols; ++j) rad_plane_store_bits(cdt, rows[0], j, static_cast<uint32_t>(static_cast<int32_t>(q[j])));
    for (int k = 1; k < enc->n_planes; ++k) {
        const RadPlaneDesc& p = enc->planes[k];
        const std::vector<float>& v = std::strcmp(p.role, "min") == 0 ? m : s;
        for (int64_t g = 0; g < cols / p.block_c; ++g) rad_store_f32(p.dtype, rows[k], g, v[static_cast<size_t>(g * p.block_c / 16)]);
    }
}

int quantize(const RadEncoding* enc, const RadQuantInput* in, void* const* planes) {
    const GgufFile* f = nullptr;
    std::vector<Part> parts;
    if (file_of(in->opt_keys, in->opt_vals, in->n_opts, &f) != RAD_OK || parts_of(*f, in->name, in->rows, in->cols, &parts) != RAD_OK)
        return RAD_E_ARG;
    uint64_t pitch[RAD_MAX_PLANES];
    for (int k = 0; k < enc->n_planes; ++k) pitch[k] = plane_pitch(enc->planes[k], in->rows, in->cols);
    for (int64_t r = in->r0; r < in->r0 + in->n_rows; ++r) {
        size_t pi = 0;
        while (pi + 1 < parts.size() && r >= parts[pi + 1].row0) ++pi;
        const Part& p = parts[pi];
        const uint8_t* src = p.t->data + static_cast<uint64_t>(gguf_row(p, r - p.row0)) * p.t->row_bytes;
        uint8_t* rows[RAD_MAX_PLANES];
        for (int k = 0; k < enc->n_planes; ++k) rows[k] = static_cast<uint8_t*>(planes[k]) + static_cast<uint64_t>(r - in->r0) * pitch[k];
        if (is_block_type(p.t->type))
            write_row(enc, p.t->type, src, in->cols, rows);
        else
            std::memcpy(rows[0], src, p.t->row_bytes);  // plain floats, the dtype as stored
    }
    return RAD_OK;
}

}  // namespace

const RadQuantizerInfo kGgml = {
    "ggml",    "a GGUF file's tensors as stored (F32, F16, BF16; Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K as affine planes)",
    kOptions,  kNOptions,
    0,         encoding,
    row_block, quantize,
    nullptr};

}  // namespace quant
