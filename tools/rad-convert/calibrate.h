// calibrate.h: rad-convert --calib TEXT. A recipe line whose quantiser needs calibration (gptq
// without calib=DIR) gets a folder of input Gram matrices made here: the model written unquantised
// to a temporary container, run on the host over TEXT with the engine's calibration tap on
// (radiance/engine/gram_files.h), then the recipe applied with that folder. Everything temporary
// is removed, whatever happens.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "radiance/convert/convert.h"

namespace radiance::tools {

struct CalibOptions {
    std::string text;       // the text file the model is run over
    int64_t tokens = 0;     // tokens to run (0: RADIANCE_CALIB_TOKENS, else 65536)
    int64_t max_chunk = 512;  // a chunk is the model's context or this, whichever is shorter
};

// convert() with `opts`, calibrated first: throws radiance::Error naming the text file, the step or
// the recipe line (the tap's folder and the unquantised container live in a temporary folder).
void convert_calibrated(std::shared_ptr<const core::Registry> reg, convert::ConvertOptions opts, const CalibOptions& calib,
                        std::ostream& log);

}  // namespace radiance::tools
