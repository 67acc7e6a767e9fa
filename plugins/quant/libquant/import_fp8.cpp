// import_fp8.cpp: 8-bit float (or int) linears as their checkpoints store them:
//
//   fine-grained fp8 (quant_method "fp8": transformers' FineGrainedFP8Config, DeepSeek-V3):
//       weight F8_E4M3 [N, K], weight_scale_inv f32 [ceil(N/br), ceil(K/bc)] (weight_block_size
//       [br, bc], 128 x 128 by default): w[n][k] = e4m3(weight[n][k]) * weight_scale_inv[n/br][k/bc]
//   compressed-tensors ("float-quantized" / "int-quantized" / "naive-quantized", symmetric 8-bit):
//       weight F8_E4M3 (type float) or I8 (type int) [N, K], weight_scale [N, 1] (strategy channel),
//       [1] or [] (tensor) or [ceil(N/br), ceil(K/bc)] (block): w[n][k] = code * weight_scale[...]
//
// Codes fp8_e4m3 (or i8) [1x1] and the scale of its stored dtype, the affine scheme's
// w = code * scale. import.cpp chooses the scale plane's blocks (a per-tensor scale is repeated
// per row; blocks are split where a fused weight's parts or K need it), the values as stored.
// Asymmetric schemes (a weight_zero_point) are refused.
#include <algorithm>

#include "import_source.h"

namespace quant {
namespace {

std::string config_of(const HfCheckpoint& ck) { return ck.dir() + "/config.json"; }

int scale_dtype_of(const std::string& st) { return st == "F16" ? RAD_F16 : st == "BF16" ? RAD_BF16 : st == "F32" ? RAD_F32 : RAD_DT_NONE; }

// The [br, bc] a block scale covers: weight_block_size (fp8) or a config group's
// weights.block_structure (compressed-tensors); 128 x 128 when neither says.
void block_of(const nlohmann::json& qc, int64_t* br, int64_t* bc) {
    *br = *bc = 128;
    auto take = [&](const nlohmann::json& v) {
        if (v.is_array() && v.size() == 2 && v[0].is_number_integer() && v[1].is_number_integer()) {
            *br = v[0].get<int64_t>();
            *bc = v[1].get<int64_t>();
        }
    };
    if (qc.contains("weight_block_size")) take(qc["weight_block_size"]);
    if (qc.contains("config_groups") && qc["config_groups"].is_object())
        for (auto& [name, g] : qc["config_groups"].items())
            if (g.is_object() && g.contains("weights") && g["weights"].is_object() && g["weights"].contains("block_structure"))
                take(g["weights"]["block_structure"]);
}

// compressed-tensors: every config group's weight scheme must be a symmetric 8-bit one.
bool compressed_tensors_ok(const HfCheckpoint& ck, std::string* why) {
    const nlohmann::json& qc = ck.quant_config();
    const std::string fmt = qc.value("format", std::string("?"));
    if (fmt != "float-quantized" && fmt != "naive-quantized" && fmt != "int-quantized")
        return *why = "quantization_config.format is '" + fmt + "' in " + config_of(ck) +
                      ": only float-quantized, int-quantized and naive-quantized compressed-tensors are imported",
               false;
    if (qc.contains("config_groups") && qc["config_groups"].is_object())
        for (auto& [name, g] : qc["config_groups"].items()) {
            if (!g.is_object() || !g.contains("weights") || !g["weights"].is_object()) continue;
            const nlohmann::json& w = g["weights"];
            const std::string at = "quantization_config.config_groups." + name + ".weights";
            if (w.value("num_bits", 8) != 8)
                return *why = at + ".num_bits is " + std::to_string(w.value("num_bits", 0)) + " in " + config_of(ck) +
                              ": only 8-bit compressed-tensors weights are imported",
                       false;
            if (!w.value("symmetric", true))
                return *why = at + ".symmetric is false in " + config_of(ck) + ": asymmetric weights are not imported", false;
        }
    return true;
}

}  // namespace

bool describe_fp8(const HfCheckpoint& ck, const std::string& prefix, Source* out, std::string* why) {
    const nlohmann::json& qc = ck.quant_config();
    const bool ct = qc.value("quant_method", std::string()) == "compressed-tensors";
    if (ct && !compressed_tensors_ok(ck, why)) return false;
    const HfTensor* w = ck.find(prefix + ".weight");
    const std::string scale_name = prefix + (ct ? ".weight_scale" : ".weight_scale_inv");
    const HfTensor* s = ck.find(scale_name);
    if (w->dtype != "F8_E4M3" && !(ct && w->dtype == "I8"))
        return *why = prefix + ".weight in " + w->file + " is " + w->dtype + (ct ? ", not F8_E4M3 or I8" : ", not F8_E4M3"), false;
    if (w->shape.size() != 2) return *why = prefix + ".weight in " + w->file + " is " + st_shape(*w) + ", not [N, K]", false;
    if (ck.find(prefix + ".weight_zero_point"))
        return *why = prefix + ".weight_zero_point is in " + w->file + ": asymmetric 8-bit weights are not imported", false;
    if (const HfTensor* gi = ck.find(prefix + ".weight_g_idx"))  // compressed-tensors' actorder "group"
        return *why = prefix + ".weight_g_idx is in " + gi->file + ": act-order compressed-tensors weights are not imported", false;
    if (!s) return *why = scale_name + " is missing from " + w->file, false;
    const int sdt = scale_dtype_of(s->dtype);
    if (sdt == RAD_DT_NONE) return *why = scale_name + " in " + s->file + " is " + s->dtype + ", not a float", false;
    const int64_t N = w->shape[0], K = w->shape[1];
    int64_t numel = 1;
    for (int64_t d : s->shape) numel *= d;
    int64_t br = 0, bc = 0;  // what one stored scale covers (0: the whole extent)
    block_of(qc, &br, &bc);
    if (ct && s->shape == std::vector<int64_t>{N, 1}) {
        br = 1, bc = 0;  // a scale per output channel
    } else if (ct && numel == 1 && s->shape.size() <= 2) {
        br = 0, bc = 0;  // one scale for the tensor
    } else if (br <= 0 || bc <= 0 || s->shape != std::vector<int64_t>{(N + br - 1) / br, (K + bc - 1) / bc}) {
        return *why = scale_name + " in " + s->file + " is " + st_shape(*s) + ", which is no scale grid of " + prefix + ".weight " +
                      st_shape(*w) + (ct ? " (per channel [N, 1], per tensor [1], or per block)" : " in blocks of weight_block_size") + "",
               false;
    }
    out->what = prefix;
    out->format = SourceFormat::Fp8;
    out->codes = w;
    out->scales = s;
    out->rows = N;
    out->cols = K;
    out->code_dtype = w->dtype == "I8" ? RAD_I8 : RAD_FP8_E4M3;
    out->scale_dtype = sdt;
    out->block_r = br;
    out->block_c = bc;
    return true;
}

float Source::scale(int64_t n, int64_t k) const {
    int64_t i = 0;
    if (format == SourceFormat::Gptq || format == SourceFormat::Awq) {
        i = (k / group) * rows + n;  // [K/group, N]
    } else if (block_r > 0) {
        const int64_t per_row = block_c > 0 ? (cols + block_c - 1) / block_c : 1;
        i = (n / block_r) * per_row + (block_c > 0 ? k / block_c : 0);
    }
    return rad_load_f32(scale_dtype, scales->data, i);
}

}  // namespace quant
