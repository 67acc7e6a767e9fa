// rad-convert SRC -o OUT.rad [--recipe PRESET|FILE] [--quant DESCRIPTOR] [--plan-only] [-v] [--arch ID]
//             [--kernels LIST] [--radiance-home HOMES] [--random-weights SEED] [--calib TEXT [--calib-tokens N]]
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

#include "calibrate.h"
#include "radiance/convert/convert.h"
#include "radiance/convert/recipe.h"
#include "radiance/util/args.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"

using namespace radiance;

int main(int argc, char** argv) {
    convert::ConvertOptions o;
    std::string homes, kernels;
    tools::CalibOptions calib;
    try {
        util::Args args(argc, argv);
        while (args.next()) {
            if (args.is("-o", "--output"))
                o.out = args.value();
            else if (args.is("--plan-only"))
                o.plan_only = true;
            else if (args.is("-v", "--verbose"))
                o.verbose = true;
            else if (args.is("--recipe"))
                o.recipe = args.value();
            else if (args.is("--calib"))
                calib.text = args.value();
            else if (args.is("--calib-tokens"))
                calib.tokens = args.integer(1, INT64_MAX);
            else if (args.is("--quant"))
                o.quant = args.value();
            else if (args.is("--arch"))
                o.arch = args.value();
            else if (args.is("--kernels"))
                kernels = args.value();
            else if (args.is("--radiance-home"))
                homes = args.value();
            else if (args.is("--random-weights")) {
                o.random_seed = static_cast<uint64_t>(args.integer(0, INT64_MAX));
                o.random_weights = true;
            } else if (args.is("-h", "--help")) {
                std::cout
                    << "usage: rad-convert SRC -o OUT.rad [--recipe PRESET|FILE] [--quant DESCRIPTOR] [--plan-only] [-v] [--arch ID]\n"
                       "                   [--kernels LIST] [--random-weights SEED] [--calib TEXT [--calib-tokens N]]\n"
                       "SRC is a Hugging Face folder (config.json, *.safetensors, tokenizer files), or a GGUF file of\n"
                       "a llama, qwen2 or qwen3 (its metadata, vocabulary and tensors as stored; recipe `* ggml file=SRC`);\n"
                       "a folder whose config.json has a quantization_config (GPTQ, AWQ, fp8, compressed-tensors) is\n"
                       "imported as stored (recipe `* import`).\n"
                       "--recipe quantises: a preset (" +
                           str::join(convert::recipe_presets(), ", ") +
                           ") or a file of lines PATTERN QUANTISER [KEY=VALUE ...]\n"
                           "(the first line whose glob matches a weight's name wins; rad-info --recipe shows what was done).\n"
                           "--calib TEXT: a recipe line whose quantiser needs calibration (gptq without calib=DIR; the preset\n"
                           "int4-gptq) gets it from the model run on the host over TEXT, in chunks of its context (at most 512),\n"
                           "for --calib-tokens N tokens (default RADIANCE_CALIB_TOKENS, else 65536).\n"
                           "--quant names the descriptor of the architecture plugin to serve it (default: from the encodings).\n"
                           "--random-weights SEED draws the weights as Hugging Face initialises a fresh model (norms ones,\n"
                           "matrices normal(0, initializer_range)) instead of reading them: config.json alone is enough.\n";
                return 0;
            } else if (args.positional() && o.src.empty())
                o.src = args.current();
            else if (args.positional())
                throw util::ArgsError("unexpected argument " + args.current());
            else
                args.unknown();
        }
    } catch (const util::ArgsError& e) {
        std::cerr << "rad-convert: " << e.what() << "\n";
        return 2;
    }
    if (calib.tokens > 0 && calib.text.empty()) {
        std::cerr << "rad-convert: --calib-tokens needs --calib TEXT (the text the model is run over)\n";
        return 2;
    }
    if (o.src.empty() || (o.out.empty() && !o.plan_only)) {
        std::cerr << "usage: rad-convert SRC -o OUT.rad [--recipe PRESET|FILE] [--quant DESCRIPTOR] [--plan-only] [-v]\n";
        return 2;
    }
    try {
        core::LoadOptions lo = core::load_options(homes, kernels);
        auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
        o.select.accept_reference = true;  // --plan-only asks "would it boot", reference kernels included
        const bool calibrated = !calib.text.empty() && !o.plan_only && convert::needs_calibration(*reg, o.recipe);
        if (!calib.text.empty() && !calibrated)
            std::cerr << "note: --calib " << calib.text << " is not used: no recipe line needs calibration"
                      << (o.plan_only ? " in --plan-only" : "") << "\n";
        if (calibrated)
            tools::convert_calibrated(reg, o, calib, std::cerr);
        else
            convert::convert(*reg, o, std::cerr);
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "rad-convert: " << e.what() << "\n";
        return 1;
    }
}
