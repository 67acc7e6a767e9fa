// rad-ppl MODEL TEXT [--ctx N] [--max-tokens N] [--kernels LIST] [--radiance-home HOMES]
//                    [--kv-cache-dtype auto|fp8|fp8_e4m3|bf16|f32]
//
// Perplexity of a text file, by the definition models/demo/ppl_reference.json records (the one
// tools/train_demo computes with transformers): tokenize the whole text without special tokens,
// keep the first max-tokens ids, cut them into consecutive chunks of ctx-1 ids, run each chunk
// alone as [BOS] + chunk, score every chunk id from the logits at its prefix (nll in f64), and
// report exp(sum nll / ids). MODEL is a .rad or a Hugging Face folder.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "radiance/convert/convert.h"
#include "radiance/engine/engine.h"
#include "radiance/text/tokenizer.h"
#include "radiance/util/args.h"
#include "radiance/util/error.h"
#include "radiance/util/kv_cache_dtype.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"

using namespace radiance;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
    std::string model, text_path, kernels, homes, kv_cache;
    int ctx = 512;
    int64_t max_tokens = 20000;
    try {
        util::Args args(argc, argv);
        while (args.next()) {
            if (args.is("--ctx"))
                ctx = static_cast<int>(args.integer(2, 1 << 20));
            else if (args.is("--max-tokens"))
                max_tokens = args.integer(1, INT64_MAX);
            else if (args.is("--kernels"))
                kernels = args.value();
            else if (args.is("--radiance-home"))
                homes = args.value();
            else if (args.is("--kv-cache-dtype"))
                kv_cache = parse_kv_cache_dtype(args.value());
            else if (!args.positional())
                args.unknown();
            else if (model.empty())
                model = args.current();
            else if (text_path.empty())
                text_path = args.current();
            else
                throw util::ArgsError("unexpected argument " + args.current());
        }
    } catch (const std::exception& e) {  // ArgsError, or a --kv-cache-dtype word not known
        std::cerr << "rad-ppl: " << e.what() << "\n";
        return 2;
    }
    if (model.empty() || text_path.empty() || ctx < 2) {
        std::cerr << "usage: rad-ppl MODEL TEXT [--ctx N] [--max-tokens N] [--kernels LIST] [--kv-cache-dtype auto|fp8|bf16|f32]\n";
        return 2;
    }
    std::string tmp;
    try {
        log::set_level(log::Level::warn);
        core::LoadOptions lo = core::load_options(homes, kernels);
        auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
        std::string rad = model;
        if (fs::is_directory(model)) {
            tmp = (fs::temp_directory_path() / ("rad_ppl_" + std::to_string(getpid()) + ".rad")).string();
            convert::ConvertOptions co;
            co.src = model;
            co.out = tmp;
            std::ostringstream sink;
            convert::convert(*reg, co, sink);
            rad = tmp;
        }
        auto c = std::shared_ptr<const container::Reader>(container::Reader::open(rad));
        auto tj = c->blob(container::Section::Tokenizer);
        if (!tj) throw Error(rad + " carries no tokenizer");
        auto tc = c->blob(container::Section::TokenizerConfig);
        text::Tokenizer tok = text::Tokenizer::from_json(*tj, tc ? *tc : std::string());
        auto bos = tok.bos_id();
        if (!bos) throw Error("the tokenizer has no BOS token");
        std::ifstream in(text_path, std::ios::binary);
        if (!in) throw Error(text_path + ": cannot read");
        std::ostringstream ss;
        ss << in.rdbuf();
        std::vector<int32_t> ids;
        for (auto id : tok.encode(ss.str(), false)) ids.push_back(static_cast<int32_t>(id));
        if (static_cast<int64_t>(ids.size()) > max_tokens) ids.resize(static_cast<size_t>(max_tokens));
        if (ids.empty()) throw Error(text_path + " has no tokens");

        engine::EngineOptions eo;
        eo.max_tok = ctx;
        eo.max_seqs = 1;
        eo.max_ctx = ctx;
        eo.max_out_rows = ctx;
        eo.select.accept_reference = true;  // a measuring tool: the reference may fill gaps
        eo.kv_dtype = engine::kv_dtype_of(kv_cache);
        auto eng = engine::Engine::create(reg, c, eo);
        const int64_t V = eng->vocab();
        const int block = eng->kv_block_size();
        double nll = 0;
        std::vector<float> lg;
        for (size_t start = 0; start < ids.size(); start += static_cast<size_t>(ctx - 1)) {
            const size_t n = std::min(ids.size() - start, static_cast<size_t>(ctx - 1));
            std::vector<int32_t> chunk{*bos};
            chunk.insert(chunk.end(), ids.begin() + static_cast<long>(start), ids.begin() + static_cast<long>(start + n));
            engine::StepBatch b = step::one_sequence(std::move(chunk), static_cast<int32_t>(block));
            for (size_t i = 0; i < n; ++i) b.out_ids.push_back(static_cast<int32_t>(i));  // position i predicts chunk[i]
            eng->step(b, lg);
            for (size_t i = 0; i < n; ++i) {
                const float* row = &lg[i * static_cast<size_t>(V)];
                double mx = row[0];
                for (int64_t v = 1; v < V; ++v) mx = std::max(mx, static_cast<double>(row[v]));
                double sum = 0;
                for (int64_t v = 0; v < V; ++v) sum += std::exp(static_cast<double>(row[v]) - mx);
                nll += mx + std::log(sum) - static_cast<double>(row[ids[start + i]]);
            }
        }
        std::printf("tokens %zu ctx %d nll_sum %.6f ppl %.8f\n", ids.size(), ctx, nll, std::exp(nll / static_cast<double>(ids.size())));
    } catch (const std::exception& e) {
        std::cerr << "rad-ppl: " << e.what() << "\n";
        if (!tmp.empty()) fs::remove(tmp);
        return 1;
    }
    if (!tmp.empty()) fs::remove(tmp);
    return 0;
}
