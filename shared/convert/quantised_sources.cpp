#include "radiance/convert/quantised_sources.h"

#include <radiance/rad_types.h>

#include "radiance/util/error.h"

namespace radiance::convert {
namespace {

bool is_float(int dt) { return dt == RAD_F32 || dt == RAD_BF16 || dt == RAD_F16; }

// "....q_proj" of "....q_proj.weight"; empty for a name that is no linear's weight.
std::string prefix_of(const std::string& name) {
    const std::string tail = ".weight";
    if (name.size() <= tail.size() || name.compare(name.size() - tail.size(), tail.size(), tail) != 0) return {};
    return name.substr(0, name.size() - tail.size());
}

}  // namespace

const StTensor* stored_quantised(const Checkpoint& ck, const std::string& name) {
    const std::string prefix = prefix_of(name);
    if (!prefix.empty())
        if (const StTensor* q = ck.find(prefix + ".qweight")) return q;
    const StTensor* t = ck.find(name);
    return t && !is_float(t->dtype) ? t : nullptr;
}

std::vector<std::string> quantised_companions(const Checkpoint& ck, const std::string& name) {
    std::vector<std::string> out;
    const std::string prefix = prefix_of(name);
    if (prefix.empty()) return out;
    for (const char* s : {".qweight", ".qzeros", ".scales", ".g_idx", ".weight", ".weight_scale", ".weight_scale_inv", ".input_scale",
                          ".weight_zero_point", ".input_zero_point"})
        if (ck.find(prefix + s)) out.push_back(prefix + s);
    return out;
}

std::optional<Recipe> import_recipe(const nlohmann::json& cfg, const std::string& config_path) {
    if (!cfg.contains("quantization_config") || !cfg["quantization_config"].is_object()) return std::nullopt;
    const nlohmann::json& qc = cfg["quantization_config"];
    const std::string method = qc.contains("quant_method") && qc["quant_method"].is_string() ? qc["quant_method"].get<std::string>() : "";
    if (method != "gptq" && method != "awq" && method != "fp8" && method != "compressed-tensors")
        throw Error(config_path + ": quantization_config.quant_method '" + method +
                    "' is not imported (gptq, awq, fp8, compressed-tensors are); convert the unquantised checkpoint instead");
    Recipe r = parse_recipe("# quantization_config (quant_method " + method +
                                "): the weights stored quantised imported as stored, the rest as stored\n"
                                "*  import\n",
                            config_path + "'s quantization_config");
    r.strict = false;
    return r;
}

}  // namespace radiance::convert
