// import_int4.cpp: 4-bit GPTQ and AWQ linears as their checkpoints store them (the layouts are
// written down in docs/container.md, "Hugging Face checkpoints already quantised"):
//
//   GPTQ  qweight i32 [K/8, N]: value (k, n) in bits 4*(k%8) of qweight[k/8][n] (packed along K)
//         qzeros  i32 [K/group, N/8]: zero (g, n) in bits 4*(n%8) of qzeros[g][n/8]; the original
//                 format ("gptq") stores zero - 1, "gptq_v2" the zero itself
//         scales  f16 [K/group, N]; g_idx i32 [K], the group of column k
//         w[n][k] = (q(k, n) - z(g_idx[k], n)) * s(g_idx[k], n)
//   AWQ   qweight i32 [K, N/8]: packed along N, nibble j of a word holding column 8*(n/8) + [0,2,4,6,1,3,5,7][j]
//         qzeros  i32 [K/group, N/8] in the same order; scales f16 [K/group, N]
//         w[n][k] = (q(k, n) - z(k/group, n)) * s(k/group, n)
//
// Both become codes u4 [1x1], a zero point u4 and a scale of the stored dtype per [1 x group], the
// affine scheme's w = (code - zero) * scale; where every zero point is 8 (GPTQ's sym=True), codes
// i4 (the nibble minus 8) and no zero point: the same numbers in less space.
//
// GPTQ's act-order (desc_act: a g_idx that is not k / group) is the `perm` transform
// (docs/container.md): perm = the columns stably sorted by g_idx, the codes stored in that order
// (stored column j is the checkpoint's column perm[j]) and the table written as the plane
// `t.perm`, so every group's columns are contiguous and the scale and zero planes keep their
// [N, K/group] form. Each group must then hold exactly group_size columns (else a stored group of
// group_size columns would straddle two of the checkpoint's groups): anything else is refused,
// naming the g_idx and its file. The parts of a fused weight (q, k, v; gate, up) read one input,
// so GPTQ gives them one order; parts whose orders differ are refused (import.cpp). AWQ has no
// g_idx (a stray one is refused), nor do the 8-bit formats (compressed-tensors' weight_g_idx is
// refused in import_fp8.cpp).
#include <algorithm>
#include <cctype>

#include "import_source.h"

namespace quant {
namespace {

// AWQ packs the 8 columns of a word so that nibble j holds column kAwqOrder[j]; column c sits in
// nibble kAwqNibble[c] (the inverse permutation).
constexpr int kAwqNibble[8] = {0, 4, 1, 5, 2, 6, 3, 7};

uint32_t nibble(int32_t word, int j) { return (static_cast<uint32_t>(word) >> (4 * j)) & 15u; }

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// An integer field of quantization_config under any of `keys`; `fallback` when none is there.
int64_t int_field(const nlohmann::json& qc, std::initializer_list<const char*> keys, int64_t fallback) {
    for (const char* k : keys)
        if (qc.contains(k) && qc[k].is_number_integer()) return qc[k].get<int64_t>();
    return fallback;
}

std::string config_of(const HfCheckpoint& ck) { return ck.dir() + "/config.json"; }

int scale_dtype_of(const std::string& st) { return st == "F16" ? RAD_F16 : st == "BF16" ? RAD_BF16 : st == "F32" ? RAD_F32 : RAD_DT_NONE; }

// The tensors every int4 format has, checked against the packing's shapes: qweight [qr, qc],
// qzeros [groups, N/8], scales [groups, N]. Fills out's tensors, K, N, group, or says why not.
bool int4_tensors(const HfCheckpoint& ck, const std::string& prefix, int64_t K, int64_t N, int64_t group_cfg, Source* out,
                  std::string* why) {
    const HfTensor* qw = ck.find(prefix + ".qweight");
    const HfTensor* qz = ck.find(prefix + ".qzeros");
    const HfTensor* sc = ck.find(prefix + ".scales");
    if (!qz) return *why = prefix + ".qzeros is missing from " + qw->file + " (imported int4 needs its zero points)", false;
    if (!sc) return *why = prefix + ".scales is missing from " + qw->file, false;
    const int64_t group = group_cfg <= 0 ? K : group_cfg;  // -1: one group over the whole row
    if (K <= 0 || N <= 0 || N % 8 != 0)
        return *why = prefix + ".qweight in " + qw->file + " has " + st_shape(*qw) + ", which packs no [N, K] of whole words", false;
    if (K % group != 0)
        return *why = "quantization_config.group_size " + std::to_string(group) + " in " + config_of(ck) + " does not divide " + prefix +
                      "'s " + std::to_string(K) + " input columns",
               false;
    const int64_t groups = K / group;
    if (qz->dtype != "I32" || qz->shape != std::vector<int64_t>{groups, N / 8})
        return *why = prefix + ".qzeros in " + qz->file + " is " + qz->dtype + " " + st_shape(*qz) + ", not I32 [" +
                      std::to_string(groups) + ", " + std::to_string(N / 8) + "]",
               false;
    const int sdt = scale_dtype_of(sc->dtype);
    if (sdt == RAD_DT_NONE || sc->shape != std::vector<int64_t>{groups, N})
        return *why = prefix + ".scales in " + sc->file + " is " + sc->dtype + " " + st_shape(*sc) + ", not F16 [" +
                      std::to_string(groups) + ", " + std::to_string(N) + "]",
               false;
    out->what = prefix;
    out->codes = qw;
    out->zeros = qz;
    out->scales = sc;
    out->rows = N;
    out->cols = K;
    out->group = group;
    out->code_dtype = RAD_U4;
    out->scale_dtype = sdt;
    return true;
}

// GPTQ act-order: the stable argsort of g_idx into out->perm, each group holding exactly `group`
// columns (then stored column j lies in group j / group), or why not.
bool act_order(const HfTensor& gi, int64_t K, int64_t group, const std::string& name, Source* out, std::string* why) {
    const int64_t groups = K / group;
    std::vector<int64_t> count(static_cast<size_t>(groups), 0);
    for (int64_t k = 0; k < K; ++k) {
        const int32_t g = st_i32(gi, k);
        if (g < 0 || g >= groups)
            return *why = name + " in " + gi.file + " puts column " + std::to_string(k) + " in group " + std::to_string(g) + " of " +
                          std::to_string(groups),
                   false;
        ++count[static_cast<size_t>(g)];
    }
    for (int64_t g = 0; g < groups; ++g)
        if (count[static_cast<size_t>(g)] != group)
            return *why = name + " in " + gi.file + " puts " + std::to_string(count[static_cast<size_t>(g)]) + " columns in group " +
                          std::to_string(g) + ", not group_size " + std::to_string(group) +
                          " (act-order is stored as the columns sorted by group, each group whole)",
                   false;
    out->perm.resize(static_cast<size_t>(K));
    for (int64_t k = 0; k < K; ++k) out->perm[static_cast<size_t>(k)] = static_cast<int32_t>(k);
    std::stable_sort(out->perm.begin(), out->perm.end(), [&](int32_t a, int32_t b) { return st_i32(gi, a) < st_i32(gi, b); });
    return true;
}

// Whether every zero point of `s` is 8: a symmetric checkpoint, whose codes minus 8 are i4.
bool every_zero_8(const Source& s) {
    for (int64_t g = 0; g < s.cols / s.group; ++g)
        for (int64_t n = 0; n < s.rows; ++n)
            if (s.zero(n, g * s.group) != 8) return false;
    return true;
}

bool bits_are_4(const HfCheckpoint& ck, const char* method, int64_t bits, std::string* why) {
    if (bits == 4) return true;
    *why = "quantization_config.bits is " + std::to_string(bits) + " in " + config_of(ck) + ": only 4-bit " + method + " is imported";
    return false;
}

}  // namespace

std::string st_shape(const HfTensor& t) {
    std::string s = "[";
    for (size_t i = 0; i < t.shape.size(); ++i) s += (i ? ", " : "") + std::to_string(t.shape[i]);
    return s + "]";
}

bool describe_gptq(const HfCheckpoint& ck, const std::string& prefix, Source* out, std::string* why) {
    const nlohmann::json& qc = ck.quant_config();
    if (!bits_are_4(ck, "GPTQ", int_field(qc, {"bits"}, 0), why)) return false;
    std::string fmt = "gptq";
    for (const char* k : {"checkpoint_format", "format"})
        if (qc.contains(k) && qc[k].is_string()) {
            fmt = lower(qc[k].get<std::string>());
            break;
        }
    if (fmt != "gptq" && fmt != "gptq_v2")
        return *why = "quantization_config.checkpoint_format is '" + fmt + "' in " + config_of(ck) +
                      ": only the gptq and gptq_v2 packings are imported (not marlin, bitblas, exllama v2, ...)",
               false;
    if (qc.value("is_marlin_format", false))
        return *why = "quantization_config.is_marlin_format is true in " + config_of(ck) + ": marlin-packed weights are not imported",
               false;
    const HfTensor* qw = ck.find(prefix + ".qweight");
    if (qw->dtype != "I32" || qw->shape.size() != 2)
        return *why = prefix + ".qweight in " + qw->file + " is " + qw->dtype + " " + st_shape(*qw) + ", not I32 [K/8, N]", false;
    const int64_t K = qw->shape[0] * 8, N = qw->shape[1];
    if (!int4_tensors(ck, prefix, K, N, int_field(qc, {"group_size"}, -1), out, why)) return false;
    out->format = SourceFormat::Gptq;
    out->zero_plus_one = fmt == "gptq";
    // g_idx: absent or k / group is the plain grouping; anything else is act-order's permutation
    if (const HfTensor* gi = ck.find(prefix + ".g_idx")) {
        if (gi->dtype != "I32" || gi->shape != std::vector<int64_t>{K})
            return *why = prefix + ".g_idx in " + gi->file + " is " + gi->dtype + " " + st_shape(*gi) + ", not I32 [" + std::to_string(K) +
                          "]",
                   false;
        out->g_idx = gi;
        for (int64_t k = 0; k < K; ++k)
            if (st_i32(*gi, k) != k / out->group) {
                if (!act_order(*gi, K, out->group, prefix + ".g_idx", out, why)) return false;
                break;
            }
    }
    // The original format's zero - 1 wraps a zero point of 0 to nibble 15 (read back as 16), which
    // no u4 zero point holds.
    if (out->zero_plus_one)
        for (int64_t i = 0; i < out->zeros->shape[0] * out->zeros->shape[1]; ++i)
            for (int j = 0; j < 8; ++j)
                if (nibble(st_i32(*out->zeros, i), j) == 15)
                    return *why = prefix + ".qzeros in " + out->zeros->file +
                                  " holds nibble 15 (zero point 16 in the gptq format's zero - 1 storage, group " +
                                  std::to_string(i / out->zeros->shape[1]) + "), which a u4 zero point cannot hold",
                           false;
    out->zero_is_8 = every_zero_8(*out);
    return true;
}

bool describe_awq(const HfCheckpoint& ck, const std::string& prefix, Source* out, std::string* why) {
    const nlohmann::json& qc = ck.quant_config();
    if (!bits_are_4(ck, "AWQ", int_field(qc, {"bits", "w_bit"}, 0), why)) return false;
    const std::string version = lower(qc.contains("version") && qc["version"].is_string() ? qc["version"].get<std::string>() : "gemm");
    if (version != "gemm")
        return *why = "quantization_config.version is '" + version + "' in " + config_of(ck) + ": only AutoAWQ's GEMM packing is imported",
               false;
    if (qc.contains("zero_point") && qc["zero_point"].is_boolean() && !qc["zero_point"].get<bool>())
        return *why = "quantization_config.zero_point is false in " + config_of(ck) + ": only AWQ with zero points is imported", false;
    const HfTensor* qw = ck.find(prefix + ".qweight");
    if (qw->dtype != "I32" || qw->shape.size() != 2)
        return *why = prefix + ".qweight in " + qw->file + " is " + qw->dtype + " " + st_shape(*qw) + ", not I32 [K, N/8]", false;
    if (const HfTensor* gi = ck.find(prefix + ".g_idx"))  // AWQ groups columns in order; a g_idx is not its format
        return *why = prefix + ".g_idx is in " + gi->file + ": AWQ weights with a g_idx are not imported", false;
    const int64_t K = qw->shape[0], N = qw->shape[1] * 8;
    if (!int4_tensors(ck, prefix, K, N, int_field(qc, {"group_size", "q_group_size"}, -1), out, why)) return false;
    out->format = SourceFormat::Awq;
    out->zero_is_8 = every_zero_8(*out);
    return true;
}

uint32_t Source::code(int64_t n, int64_t k) const {
    switch (format) {
    case SourceFormat::Gptq:
        if (!perm.empty()) k = perm[static_cast<size_t>(k)];  // stored column k is the checkpoint's perm[k]
        return nibble(st_i32(*codes, (k / 8) * rows + n), static_cast<int>(k % 8));
    case SourceFormat::Awq: return nibble(st_i32(*codes, k * (rows / 8) + n / 8), kAwqNibble[n % 8]);
    case SourceFormat::Fp8: return codes->data[n * cols + k];
    case SourceFormat::Plain: break;
    }
    return 0;
}

uint32_t Source::zero(int64_t n, int64_t k) const {
    const int64_t g = k / group;  // under act-order too: stored columns are sorted by group, each group whole
    const int32_t word = st_i32(*zeros, g * (rows / 8) + n / 8);
    if (format == SourceFormat::Awq) return nibble(word, kAwqNibble[n % 8]);
    return nibble(word, static_cast<int>(n % 8)) + (zero_plus_one ? 1u : 0u);
}

}  // namespace quant
