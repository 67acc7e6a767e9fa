// calibrate.cpp: rad-convert --calib TEXT (calibrate.h). The model runs as rad-ppl runs it: the
// text tokenised without special tokens, cut into consecutive chunks, each a prompt [BOS] + chunk
// of its own; only a chunk's last row asks for logits (the tap wants the projections' inputs, and
// the head's gemm over every row would cost more than the rest of the model; an untied head
// quantised by gptq is then calibrated on those rows alone).
#include "calibrate.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "radiance/engine/engine.h"
#include "radiance/engine/model_meta.h"
#include "radiance/text/tokenizer.h"
#include "radiance/util/error.h"

namespace radiance::tools {
namespace {

namespace fs = std::filesystem;

// A temporary folder, removed with everything in it when this goes out of scope.
struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() / ("rad_convert_calib_" + std::to_string(getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

int64_t token_budget(int64_t asked) {
    if (asked > 0) return asked;
    if (const char* p = std::getenv("RADIANCE_CALIB_TOKENS"); p && *p) {
        char* end = nullptr;
        const long long v = std::strtoll(p, &end, 10);
        if (*end || v <= 0) throw Error(std::string("RADIANCE_CALIB_TOKENS=") + p + " is not a positive number of tokens");
        return v;
    }
    return 65536;
}

// Runs the container at `rad` over the text with the tap writing into `dir`.
void run_tap(std::shared_ptr<const core::Registry> reg, const std::string& rad, const CalibOptions& calib, const std::string& dir,
             std::ostream& log) {
    auto c = std::shared_ptr<const container::Reader>(container::Reader::open(rad));
    auto tj = c->blob(container::Section::Tokenizer);
    if (!tj) throw Error("--calib " + calib.text + ": the model carries no tokenizer to read it with");
    auto tc = c->blob(container::Section::TokenizerConfig);
    text::Tokenizer tok = text::Tokenizer::from_json(*tj, tc ? *tc : std::string());
    std::ifstream in(calib.text, std::ios::binary);
    if (!in) throw Error("--calib " + calib.text + ": cannot read the file");
    std::ostringstream ss;
    ss << in.rdbuf();
    std::vector<int32_t> ids;
    for (auto id : tok.encode(ss.str(), false)) ids.push_back(static_cast<int32_t>(id));
    if (ids.empty()) throw Error("--calib " + calib.text + ": the file has no tokens");
    const auto bos = tok.bos_id();

    const engine::ModelMeta meta(engine::meta_from_container(*c));
    const int64_t n_ctx = meta.get()->n_ctx_train > 0 ? meta.get()->n_ctx_train : calib.max_chunk;
    const int ctx = static_cast<int>(std::max<int64_t>(2, std::min(n_ctx, calib.max_chunk)));
    const int64_t budget = token_budget(calib.tokens);
    engine::EngineOptions eo;
    eo.max_tok = ctx;
    eo.max_seqs = 1;
    eo.max_ctx = ctx;
    eo.max_out_rows = 1;
    eo.placement = "host";
    eo.select.accept_reference = true;  // a calibration run, as a measuring tool: the reference may fill gaps
    eo.calib_dir = dir;
    eo.calib_tokens = budget;
    auto eng = engine::Engine::create(reg, c, eo);
    const int block = eng->kv_block_size();
    const size_t per = static_cast<size_t>(ctx - (bos ? 1 : 0));
    const size_t chunks = (ids.size() + per - 1) / per;
    int64_t ran = 0;
    size_t done = 0;
    std::vector<float> lg;
    for (size_t start = 0; start < ids.size() && ran < budget; start += per, ++done) {
        const size_t n = std::min({ids.size() - start, per, static_cast<size_t>(budget - ran)});
        std::vector<int32_t> chunk;
        if (bos) chunk.push_back(*bos);
        chunk.insert(chunk.end(), ids.begin() + static_cast<long>(start), ids.begin() + static_cast<long>(start + n));
        engine::StepBatch b = step::one_sequence(std::move(chunk), static_cast<int32_t>(block));
        b.out_ids = {static_cast<int32_t>(b.tokens.size() - 1)};
        eng->step(b, lg);
        ran += static_cast<int64_t>(b.tokens.size());
        if (done % 8 == 0) log << "calibration: chunk " << done + 1 << "/" << chunks << " (" << ran << " of at most " << budget << " tokens)\n";
    }
    eng->finish_calibration();
    log << "calibration: " << ran << " tokens of " << calib.text << " in chunks of " << ctx << "; input Gram matrices in " << dir << "\n";
}

}  // namespace

void convert_calibrated(std::shared_ptr<const core::Registry> reg, convert::ConvertOptions opts, const CalibOptions& calib,
                        std::ostream& log) {
    if (std::ifstream probe(calib.text, std::ios::binary); !probe)  // before minutes of work, not after
        throw Error("--calib " + calib.text + ": cannot read the file");
    TempDir tmp;
    const std::string rad = (tmp.path / "unquantised.rad").string(), dir = (tmp.path / "gram").string();
    convert::ConvertOptions plain = opts;
    plain.recipe.clear();
    plain.quant.reset();
    plain.plan_only = false;
    plain.verbose = false;
    plain.out = rad;
    log << "calibration: the unquantised model to " << rad << "\n";
    std::ostringstream quiet;  // its per-weight lines are not this run's
    convert::convert(*reg, plain, quiet);
    run_tap(reg, rad, calib, dir, log);
    fs::remove(rad);
    opts.calib_dir = dir;
    convert::convert(*reg, opts, log);
}

}  // namespace radiance::tools
