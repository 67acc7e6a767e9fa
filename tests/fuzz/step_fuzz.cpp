// libFuzzer target for what a worker does with the bytes of a step: decode them (a step
// descriptor or a step result, by magic) and, when a descriptor decodes, run its batch through a
// real engine (libref, a small llama fixture, 8 blocks of KV cache). Every input must either
// decode and run, or raise radiance::Error; a crash, a sanitizer report or a hang is a bug in the
// decoder or in the engine's checks of a batch (positions, block tables, sequence counts).
// Setup: RAD_FUZZ_HOME (a RADIANCE_HOME with libref) and RAD_FUZZ_FIXTURE (a Hugging Face fixture
// folder) default to this build's home and tests/golden/fixtures/qwen2_tied_gqa3.
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <unistd.h>

#include "radiance/container/container.h"
#include "radiance/convert/convert.h"
#include "radiance/core/registry.h"
#include "radiance/engine/engine.h"
#include "radiance/ipc/step_codec.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"

using namespace radiance;

namespace {

std::unique_ptr<engine::Engine> g_engine;

std::string env_or(const char* name, const char* fallback) {
    const char* v = std::getenv(name);
    return v && *v ? v : fallback;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    log::set_level(log::Level::error);
    const std::string home = env_or("RAD_FUZZ_HOME", RAD_FUZZ_DEFAULT_HOME);
    const std::string fixture = env_or("RAD_FUZZ_FIXTURE", RAD_FUZZ_DEFAULT_FIXTURE);
    const std::string rad = (std::filesystem::temp_directory_path() / ("step_fuzz_" + std::to_string(getpid()) + ".rad")).string();
    try {
        auto reg = std::make_shared<const core::Registry>(core::Registry::load(core::load_options(home, "libref")));
        convert::ConvertOptions co;
        co.src = fixture;
        co.out = rad;
        std::ostringstream quiet;
        convert::convert(*reg, co, quiet);
        auto model = std::shared_ptr<const container::Reader>(container::Reader::open(rad));
        engine::EngineOptions eo;
        eo.max_tok = 32;
        eo.max_seqs = 4;
        eo.max_ctx = 64;
        eo.max_out_rows = 8;
        eo.kv_blocks = 8;
        eo.select.accept_reference = true;
        eo.placement = "host";
        g_engine = engine::Engine::create(reg, model, eo);
    } catch (const std::exception& e) {
        std::cerr << "step_fuzz: cannot set up the engine (home " << home << ", fixture " << fixture << "): " << e.what() << "\n";
        std::filesystem::remove(rad);
        std::exit(2);
    }
    std::filesystem::remove(rad);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    try {
        (void)ipc::decode_result(bytes);
    } catch (const Error&) {
    }
    try {
        ipc::StepMessage m = ipc::decode_step(bytes);
        std::vector<float> logits;
        g_engine->step(m.batch, logits);
    } catch (const Error&) {
    }
    return 0;
}
