// ggml: a weight imported from a GGUF file's tensor of the same name, its numbers as stored there
// (recipe option file=PATH), rather than quantised from the checkpoint's: F32, F16 and BF16 as
// plain floats, Q8_0 and Q4_0 as the affine scheme's canonical planes, exactly:
//
//   Q8_0  blocks of 32: an f16 scale d, 32 int8 q;  w = d * q        -> codes i8, scale f16 [1 x 32]
//   Q4_0  blocks of 32: an f16 scale d, 16 bytes;   w = d * (n - 8)  -> codes i4 (n - 8), scale f16
//         (n of value j < 16 the low nibble of byte j, of value j + 16 its high nibble)
//
// The container's names are llama.cpp's (blk.N.attn_q.weight, ...), so a weight is found by its own
// name; the fused projections the llama family stores are assembled from their parts
// (attn_qkv <- attn_q, attn_k, attn_v; ffn_gate_up <- ffn_gate, ffn_up), rows concatenated. llama.cpp's
// converter reorders a llama's q and k rows for its rotation (per head, row a * hd/2 + b -> 2b + a);
// for general.architecture "llama" that is undone here. The checkpoint's own values still arrive
// (the converter's error report measures the import against them) and are not otherwise used.
// Other ggml types (the K-quants, IQ*) are refused naming the tensor, its type and the file.
#include <cstdio>
#include <cstring>

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
            return refuse(RAD_E_SHAPE, "tensor '" + n + "' of " + f.path() + " has rows of " + std::to_string(t->cols) + " values, weight '" +
                                           name + "' of " + std::to_string(cols));
        if (!t->row_bytes)
            return refuse(RAD_E_UNSUPPORTED, "tensor '" + n + "' of " + f.path() + " is " + ggml_type_name(t->type) +
                                                 ", which is not imported (F32, F16, BF16, Q8_0, Q4_0)");
        if (t->type != f.find(names[0])->type)
            return refuse(RAD_E_UNSUPPORTED, "the parts of weight '" + name + "' in " + f.path() + " differ in type (" +
                                                 ggml_type_name(f.find(names[0])->type) + ", " + ggml_type_name(t->type) + ")");
        int64_t heads = 0;
        if (arch == "llama" && (ends_with(n, "attn_q.weight") || ends_with(n, "attn_k.weight"))) {
            const std::string key = ends_with(n, "attn_q.weight") ? "llama.attention.head_count" : "llama.attention.head_count_kv";
            heads = f.integer(key, f.integer("llama.attention.head_count", 0));
            if (heads <= 0 || t->rows % (2 * heads) != 0)
                return refuse(RAD_E_SHAPE, "tensor '" + n + "' of " + f.path() + ": " + key + " does not split its " + std::to_string(t->rows) +
                                               " rows into heads");
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

int encoding(const char* name, int64_t rows, int64_t cols, const char* const* keys, const char* const* vals, int n, RadEncoding* out) {
    const GgufFile* f = nullptr;
    std::vector<Part> parts;
    if (int rc = file_of(keys, vals, n, &f); rc != RAD_OK) return rc;
    if (int rc = parts_of(*f, name, rows, cols, &parts); rc != RAD_OK) return rc;
    switch (parts[0].t->type) {
    case kGgmlF32: *out = rad_encoding_plain(RAD_F32); break;
    case kGgmlF16: *out = rad_encoding_plain(RAD_F16); break;
    case kGgmlBF16: *out = rad_encoding_plain(RAD_BF16); break;
    default:
        *out = rad_encoding_affine(parts[0].t->type == kGgmlQ8_0 ? RAD_I8 : RAD_I4);
        rad_encoding_add_tiled(out, "scale", RAD_F16, 1, 32);
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

// One row of blocks into codes and scales (f16 bits copied: the scale is d exactly).
void row_q8_0(const uint8_t* src, int64_t cols, uint8_t* codes, uint8_t* scale) {
    for (int64_t b = 0; b < cols / 32; ++b, src += 34) {
        std::memcpy(scale + 2 * b, src, 2);
        std::memcpy(codes + 32 * b, src + 2, 32);  // int8 as int8
    }
}

void row_q4_0(const uint8_t* src, int64_t cols, uint8_t* codes, uint8_t* scale) {
    for (int64_t b = 0; b < cols / 32; ++b, src += 18) {
        std::memcpy(scale + 2 * b, src, 2);
        int8_t v[32];
        for (int j = 0; j < 16; ++j) {
            v[j] = static_cast<int8_t>((src[2 + j] & 15) - 8);
            v[j + 16] = static_cast<int8_t>((src[2 + j] >> 4) - 8);
        }
        // canonical i4: value k in byte k / 2, the lower nibble first, two's complement
        for (int j = 0; j < 16; ++j) codes[16 * b + j] = static_cast<uint8_t>((v[2 * j] & 15) | ((v[2 * j + 1] & 15) << 4));
    }
}

int quantize(const RadEncoding* enc, const RadQuantInput* in, void* const* planes) {
    const GgufFile* f = nullptr;
    std::vector<Part> parts;
    if (file_of(in->opt_keys, in->opt_vals, in->n_opts, &f) != RAD_OK || parts_of(*f, in->name, in->rows, in->cols, &parts) != RAD_OK)
        return RAD_E_ARG;
    const uint32_t type = parts[0].t->type;
    const uint64_t code_pitch = plane_pitch(enc->planes[0], in->rows, in->cols);
    const uint64_t scale_pitch = enc->n_planes > 1 ? plane_pitch(enc->planes[1], in->rows, in->cols) : 0;
    for (int64_t r = in->r0; r < in->r0 + in->n_rows; ++r) {
        size_t pi = 0;
        while (pi + 1 < parts.size() && r >= parts[pi + 1].row0) ++pi;
        const Part& p = parts[pi];
        const uint8_t* src = p.t->data + static_cast<uint64_t>(gguf_row(p, r - p.row0)) * p.t->row_bytes;
        auto* codes = static_cast<uint8_t*>(planes[0]) + static_cast<uint64_t>(r - in->r0) * code_pitch;
        auto* scale = enc->n_planes > 1 ? static_cast<uint8_t*>(planes[1]) + static_cast<uint64_t>(r - in->r0) * scale_pitch : nullptr;
        if (type == kGgmlQ8_0)
            row_q8_0(src, in->cols, codes, scale);
        else if (type == kGgmlQ4_0)
            row_q4_0(src, in->cols, codes, scale);
        else
            std::memcpy(codes, src, p.t->row_bytes);  // plain floats, the dtype as stored
    }
    return RAD_OK;
}

}  // namespace

const RadQuantizerInfo kGgml = {"ggml",    "a GGUF file's tensors as stored (F32, F16, BF16; Q8_0 and Q4_0 as affine planes)",
                                kOptions,  kNOptions,
                                0,         encoding,
                                row_block, quantize,
                                nullptr};

}  // namespace quant
