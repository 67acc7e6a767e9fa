// convert.h: a Hugging Face folder -> a RAD2 container, driven by the architecture plugin's name
// map (the converter knows no model). Errors name the tensor and the file.
#pragma once
#include <optional>
#include <ostream>
#include <string>

#include "radiance/core/registry.h"
#include "radiance/core/selection.h"

namespace radiance::convert {

struct ConvertOptions {
    std::string src;         // a folder with config.json and *.safetensors (config.json alone with random_weights)
    std::string out;         // the .rad to write (ignored with plan_only)
    int out_fd = -1;         // >= 0: into this open, empty file instead of `out` (a memory file; nothing renamed)
    std::string arch;        // override the architecture id ("" = from model_type)
    bool plan_only = false;  // declare, resolve every op and check every weight; write nothing
    bool verbose = false;
    // Draw the weights instead of reading them (random_weights.h): only config.json is needed, and
    // the container has the model's real geometry and metadata; optional weights are left out.
    bool random_weights = false;
    uint64_t random_seed = 0;
    core::SelectOptions select;  // for plan_only's resolution
    // A recipe (recipe.h): a preset's name or a file. Empty: every weight as the checkpoint stores it.
    std::string recipe;
    // The quant descriptor of the plugin to serve the result ((arch id, quant) selects it); unset:
    // derived from what the recipe's quantisers wrote (fp8_e4m3, w8a16, w4a16, or "").
    std::optional<std::string> quant;
    // The calibration tap's folder (radiance/engine/gram_files.h) for every recipe line whose
    // quantiser has a `calib` option it does not set (libquant's gptq); without it such a line is
    // an error naming --calib. rad-convert --calib TEXT makes one (tools/rad-convert/calibrate.h).
    std::string calib_dir;
};

// Whether the recipe (a preset's name or a file) has a line whose quantiser needs calibration data
// it does not name (an option `calib` left unset). Throws as load_recipe does.
bool needs_calibration(const core::Registry& reg, const std::string& recipe);

// Throws radiance::Error on any problem. Progress and -v detail go to `log`.
void convert(const core::Registry& reg, const ConvertOptions& opts, std::ostream& log);

}  // namespace radiance::convert
