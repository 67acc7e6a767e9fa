// import: a weight as a Hugging Face checkpoint already stores it quantised (GPTQ or AWQ int4,
// fine-grained or compressed-tensors fp8, compressed-tensors int8), its numbers taken as stored
// into the affine scheme's canonical planes rather than quantised again; a weight the checkpoint
// stores as floats stays plain in its own dtype. rad-convert picks it by itself for a folder whose
// config.json has a quantization_config, and gives two options the recipe does not: `checkpoint`
// (the folder) and `tensors` (the checkpoint tensors whose rows make the weight, from the
// architecture's name map: q_proj, k_proj and v_proj for a fused attn_qkv). The formats' layouts
// are in import_int4.cpp and import_fp8.cpp (GPTQ act-order as the perm transform); everything
// they refuse (other bit widths, packings, an act-order whose groups are not whole, a missing
// tensor, a shape that does not fit) is refused here at encoding time, before the converter
// writes anything, naming the weight, the field or tensor and the file on stderr.
// The checkpoint's values the converter passes are used only for plain weights (it has none for a
// weight stored quantised).
#include <cstdio>
#include <cstring>
#include <numeric>
#include <vector>

#include "import_source.h"
#include "options.h"
#include "quantizers.h"

namespace quant {
namespace {

const RadQuantOption kOptions[] = {
    {"checkpoint", RAD_P_STR, 0, "", "the Hugging Face folder (rad-convert gives its SRC)"},
    {"tensors", RAD_P_STR, 0, "",
     "the checkpoint tensors whose rows make the weight, comma-separated (rad-convert gives them from the name map)"},
};
constexpr int kNOptions = sizeof kOptions / sizeof kOptions[0];

int refuse(int rc, const std::string& weight, const std::string& why) {
    std::fprintf(stderr, "import: weight '%s': %s\n", weight.c_str(), why.c_str());
    return rc;
}

bool is_float_st(const std::string& d) { return d == "F32" || d == "F16" || d == "BF16"; }
int float_dt(const std::string& d) { return d == "F32" ? RAD_F32 : d == "F16" ? RAD_F16 : RAD_BF16; }

// A weight's sources and the encoding they make.
struct Plan {
    std::vector<Source> parts;
    RadEncoding enc{};
};

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    size_t a = 0;
    while (a <= s.size()) {
        const size_t b = std::min(s.find(',', a), s.size());
        if (b > a) out.push_back(s.substr(a, b - a));
        a = b + 1;
    }
    return out;
}

// One named tensor of the checkpoint as a Source, by what the checkpoint stores under its prefix.
bool source_of(const HfCheckpoint& ck, const std::string& tensor, Source* out, std::string* why) {
    const std::string method = ck.quant_config().value("quant_method", std::string());
    const bool is_weight = tensor.size() > 7 && tensor.compare(tensor.size() - 7, 7, ".weight") == 0;
    const std::string prefix = is_weight ? tensor.substr(0, tensor.size() - 7) : std::string();
    if (is_weight)
        if (const HfTensor* qw = ck.find(prefix + ".qweight")) {
            if (method == "gptq") return describe_gptq(ck, prefix, out, why);
            if (method == "awq") return describe_awq(ck, prefix, out, why);
            return *why = prefix + ".qweight is in " + qw->file + " but quantization_config.quant_method in " + ck.dir() +
                          "/config.json is '" + method + "', not gptq or awq",
                   false;
        }
    const HfTensor* t = ck.find(tensor);
    if (!t) return *why = "tensor '" + tensor + "' is not in " + ck.dir(), false;
    if (is_float_st(t->dtype)) {
        out->what = tensor;
        out->format = SourceFormat::Plain;
        out->codes = t;
        out->code_dtype = float_dt(t->dtype);
        return true;
    }
    if (is_weight && (t->dtype == "F8_E4M3" || t->dtype == "I8")) {
        if (method == "fp8" || method == "compressed-tensors") return describe_fp8(ck, prefix, out, why);
        return *why = tensor + " in " + t->file + " is " + t->dtype + " but quantization_config.quant_method in " + ck.dir() +
                      "/config.json is '" + method + "', not fp8 or compressed-tensors",
               false;
    }
    return *why = "tensor '" + tensor + "' in " + t->file + " is " + t->dtype + ", which is not imported", false;
}

// The encoding of a weight of [rows x cols] made of `parts` (rows stacked in order), or a refusal.
bool plan_of(int64_t rows, int64_t cols, std::vector<Source> parts, Plan* out, std::string* why) {
    const Source& a = parts[0];
    for (const Source& p : parts)
        if (p.format != a.format) return *why = "its parts " + a.what + " and " + p.what + " are stored differently", false;
    if (a.format == SourceFormat::Plain) {  // the converter's values, as the checkpoint's dtype has them
        for (const Source& p : parts)
            if (p.code_dtype != a.code_dtype) return *why = "its parts " + a.what + " and " + p.what + " differ in dtype", false;
        out->enc = rad_encoding_plain(a.code_dtype);
        out->parts = std::move(parts);
        return true;
    }
    int64_t row0 = 0;
    for (Source& p : parts) {
        if (p.cols != cols)
            return *why = p.what + " has " + std::to_string(p.cols) + " input columns, the weight " + std::to_string(cols), false;
        if (p.code_dtype != a.code_dtype || p.scale_dtype != a.scale_dtype || p.group != a.group)
            return *why = "its parts " + a.what + " and " + p.what + " differ in code or scale dtype or group size", false;
        if (p.perm != a.perm)  // one table orders every row (GPTQ gives parts that read one input one order)
            return *why = "its parts " + a.what + " and " + p.what + " differ in act-order (g_idx), which one perm table cannot hold",
                   false;
        const bool pb = p.block_r > 0 && p.block_c > 0, ab = a.block_r > 0 && a.block_c > 0;
        if (pb != ab || (pb && (p.block_r != a.block_r || p.block_c != a.block_c)))
            return *why = "its parts " + a.what + " and " + p.what + " have scales of different blocks", false;
        p.row0 = row0;
        row0 += p.rows;
    }
    if (row0 != rows)
        return *why = "its checkpoint tensors have " + std::to_string(row0) + " rows in all, the weight " + std::to_string(rows), false;
    out->enc = rad_encoding_affine(a.code_dtype);
    if (a.format == SourceFormat::Fp8) {
        int64_t br = 1, bc = 0;  // per channel (a per-tensor scale repeated a row)
        if (a.block_r > 0 && a.block_c > 0) {
            // Blocks as stored, split where a fused weight's parts start or K ends inside one, so
            // every canonical block lies in one stored block (its scale repeated): exact.
            br = a.block_r;
            for (const Source& p : parts) br = std::gcd(br, p.rows);
            bc = std::gcd(a.block_c, cols);
        }
        rad_encoding_add_tiled(&out->enc, "scale", a.scale_dtype, br, bc);
    } else {
        bool symmetric = true;  // every zero point 8: i4 codes (the nibble minus 8), no zero plane
        for (const Source& p : parts) symmetric = symmetric && p.zero_is_8;
        if (symmetric) out->enc = rad_encoding_affine(RAD_I4);
        rad_encoding_add_tiled(&out->enc, "scale", a.scale_dtype, 1, a.group);
        if (!symmetric) rad_encoding_add_tiled(&out->enc, "zero", RAD_U4, 1, a.group);
        if (!a.perm.empty()) rad_encoding_add_perm(&out->enc, cols);  // act-order: the codes' columns in perm's order
    }
    out->parts = std::move(parts);
    return true;
}

// The weight's plan from the options, or a refusal (already said on stderr).
int plan_for(const char* name, int64_t rows, int64_t cols, const char* const* keys, const char* const* vals, int n, Plan* out) {
    const Options o(kOptions, kNOptions, keys, vals, n);
    if (!o.known()) return RAD_E_ARG;
    if (o.text("checkpoint").empty())
        return refuse(RAD_E_ARG, name, "no checkpoint= folder (rad-convert gives it; is this an older converter?)");
    std::string err;
    const HfCheckpoint* ck = HfCheckpoint::open(o.text("checkpoint"), &err);
    if (!ck) return refuse(RAD_E_ARG, name, err);
    std::vector<std::string> names = split(o.text("tensors"));
    if (names.empty()) names.push_back(name);
    std::vector<Source> parts;
    for (const std::string& t : names) {
        Source s;
        if (!source_of(*ck, t, &s, &err)) return refuse(RAD_E_SHAPE, name, err);
        parts.push_back(s);
    }
    if (!plan_of(rows, cols, std::move(parts), out, &err)) return refuse(RAD_E_SHAPE, name, err);
    return RAD_OK;
}

int encoding(const char* name, int64_t rows, int64_t cols, const char* const* keys, const char* const* vals, int n, RadEncoding* out) {
    Plan p;
    if (int rc = plan_for(name, rows, cols, keys, vals, n, &p); rc != RAD_OK) return rc;
    *out = p.enc;
    return RAD_OK;
}

int64_t row_block(const RadEncoding* enc, int64_t, int64_t cols) {
    const int s = rad_encoding_plane(enc, "scale");
    return rows_per_block(cols, s >= 0 && enc->planes[s].block_r > 0 ? enc->planes[s].block_r : 1);
}

int quantize(const RadEncoding* enc, const RadQuantInput* in, void* const* planes) {
    Plan p;
    if (plan_for(in->name, in->rows, in->cols, in->opt_keys, in->opt_vals, in->n_opts, &p) != RAD_OK) return RAD_E_ARG;
    if (std::memcmp(&p.enc, enc, sizeof p.enc) != 0) return RAD_E_ARG;  // not the encoding this weight was planned with
    const int64_t cols = in->cols;
    if (p.parts[0].format == SourceFormat::Plain) {
        if (!in->data) return RAD_E_ARG;
        for (int64_t i = 0; i < in->n_rows * cols; ++i) rad_store_f32(enc->planes[0].dtype, planes[0], i, in->data[i]);
        return RAD_OK;
    }
    const int codes = 0, scale = rad_encoding_plane(enc, "scale"), zero = rad_encoding_plane(enc, "zero");
    const int perm = rad_encoding_plane(enc, "t.perm");
    if (perm >= 0)  // the table, whole at every call (the converter decodes each block with it)
        std::memcpy(planes[perm], p.parts[0].perm.data(), static_cast<size_t>(cols) * sizeof(int32_t));
    const RadPlaneDesc& sd = enc->planes[scale];
    const int64_t br = sd.block_r > 0 ? sd.block_r : in->rows, bc = sd.block_c > 0 ? sd.block_c : cols;
    if (in->r0 % br != 0) return RAD_E_SHAPE;  // a block of rows never straddles two calls
    const uint64_t cp = plane_pitch(enc->planes[codes], in->rows, cols), sp = plane_pitch(sd, in->rows, cols);
    const uint64_t zp = zero >= 0 ? plane_pitch(enc->planes[zero], in->rows, cols) : 0;
    const int64_t n_scales = (cols + bc - 1) / bc;
    const bool minus_8 = enc->planes[codes].dtype == RAD_I4;  // symmetric int4: the nibble minus 8 (two's complement)
    size_t pi = 0;
    for (int64_t r = in->r0; r < in->r0 + in->n_rows; ++r) {
        while (pi + 1 < p.parts.size() && r >= p.parts[pi + 1].row0) ++pi;
        const Source& s = p.parts[pi];
        const int64_t n = r - s.row0;
        auto* crow = static_cast<uint8_t*>(planes[codes]) + static_cast<uint64_t>(r - in->r0) * cp;
        std::memset(crow, 0, cp);  // sub-byte rows: the padding bits are zero
        for (int64_t k = 0; k < cols; ++k)
            rad_plane_store_bits(enc->planes[codes].dtype, crow, k, minus_8 ? (s.code(n, k) - 8u) & 15u : s.code(n, k));
        if (r % br != 0) continue;  // the first row of a scale block writes its scales
        const int64_t pr = (r - in->r0) / br;
        auto* srow = static_cast<uint8_t*>(planes[scale]) + static_cast<uint64_t>(pr) * sp;
        auto* zrow = zero >= 0 ? static_cast<uint8_t*>(planes[zero]) + static_cast<uint64_t>(pr) * zp : nullptr;
        if (zrow) std::memset(zrow, 0, zp);
        for (int64_t j = 0; j < n_scales; ++j) {
            rad_store_f32(sd.dtype, srow, j, s.scale(n, j * bc));
            if (zrow) rad_plane_store_bits(RAD_U4, zrow, j, s.zero(n, j * bc));
        }
    }
    return RAD_OK;
}

}  // namespace

const RadQuantizerInfo kImport = {
    "import",  "a Hugging Face checkpoint's GPTQ / AWQ int4 or fp8 / int8 weights as stored (no requantisation)",
    kOptions,  kNOptions,
    0,         encoding,
    row_block, quantize,
    nullptr};

}  // namespace quant
