// rad-convert SRC -o OUT.rad [--plan-only] [-v] [--arch ID] [--kernels LIST] [--radiance-home HOMES]
//             [--random-weights SEED]
#include <cstdlib>
#include <iostream>
#include <string>

#include "radiance/convert/convert.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"

using namespace radiance;

int main(int argc, char** argv) {
    convert::ConvertOptions o;
    std::string homes, kernels;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "rad-convert: " << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "-o" || a == "--output") o.out = value();
        else if (a == "--plan-only") o.plan_only = true;
        else if (a == "-v" || a == "--verbose") o.verbose = true;
        else if (a == "--arch") o.arch = value();
        else if (a == "--kernels") kernels = value();
        else if (a == "--radiance-home") homes = value();
        else if (a == "--random-weights") {
            const std::string v = value();
            char* end = nullptr;
            o.random_seed = std::strtoull(v.c_str(), &end, 10);
            if (v.empty() || *end) {
                std::cerr << "rad-convert: --random-weights needs a whole-number seed, not '" << v << "'\n";
                return 2;
            }
            o.random_weights = true;
        }
        else if (a == "-h" || a == "--help") {
            std::cout << "usage: rad-convert SRC -o OUT.rad [--plan-only] [-v] [--arch ID] [--kernels LIST] [--random-weights SEED]\n"
                         "SRC is a Hugging Face folder (config.json, *.safetensors, tokenizer files).\n"
                         "--random-weights SEED draws the weights as Hugging Face initialises a fresh model (norms ones,\n"
                         "matrices normal(0, initializer_range)) instead of reading them: config.json alone is enough.\n";
            return 0;
        } else if (!a.empty() && a[0] == '-') {
            std::cerr << "rad-convert: unknown option " << a << "\n";
            return 2;
        } else if (o.src.empty()) o.src = a;
        else {
            std::cerr << "rad-convert: unexpected argument " << a << "\n";
            return 2;
        }
    }
    if (o.src.empty() || (o.out.empty() && !o.plan_only)) {
        std::cerr << "usage: rad-convert SRC -o OUT.rad [--plan-only] [-v]\n";
        return 2;
    }
    try {
        core::LoadOptions lo = core::load_options(homes, kernels);
        core::Registry reg = core::Registry::load(lo);
        o.select.accept_reference = true;  // --plan-only asks "would it boot", reference kernels included
        convert::convert(reg, o, std::cerr);
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "rad-convert: " << e.what() << "\n";
        return 1;
    }
}
