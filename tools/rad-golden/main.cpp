// rad-golden DIR [--tp N] [--kernels LIST] [--tol X] [--radiance-home HOMES] [--transport shm|grpc] [--in-process]
//                [--placement auto|host|device] [--no-graphs] [--top1 FRAC] [--model FILE.rad]
//
// Converts the checkpoint in DIR (or takes --model, that checkpoint already converted: big ones), runs the prompts of DIR/golden.safetensors (promptN.ids,
// promptN.logits, promptN.greedy) each alone and all together in one batch, and compares the
// prompt logits (relative error ||ours - ref|| / ||ref||) and the greedy tokens with the
// transformers reference. The prompts run through radiance-worker processes (one per rank) as a
// server runs them; --in-process steps an engine in this process instead. --top1 FRAC checks
// teacher-forced agreement instead of exact greedy runs: the share of prompt positions whose
// top-1 token is the reference's must reach FRAC (a bf16 card path may flip a near-tie, after
// which a free-running greedy sequence legitimately differs); greedy differences are then noted. One line per check, then "N passed, M failed"; exit 0 only if all pass.
#include <unistd.h>

#include <cmath>
#include <functional>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "radiance/convert/convert.h"
#include "worker_group.h"
#include "radiance/convert/safetensors.h"
#include "radiance/engine/engine.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"

using namespace radiance;
namespace fs = std::filesystem;

namespace {

struct Prompt {
    std::string name;
    std::vector<int32_t> ids, greedy;
    std::vector<float> logits;  // [ids.size(), vocab]
};

template <typename T> std::vector<T> as_vec(const convert::StTensor& t) {
    std::vector<T> v(t.bytes / sizeof(T));
    std::memcpy(v.data(), t.data, t.bytes);
    return v;
}

std::vector<Prompt> load_golden(const std::string& path) {
    auto f = convert::SafetensorsFile::open(path);
    std::vector<Prompt> out;
    for (int i = 0;; ++i) {
        std::string p = "prompt" + std::to_string(i);
        auto ids = f->tensors().find(p + ".ids");
        if (ids == f->tensors().end()) break;
        auto lg = f->tensors().find(p + ".logits");
        auto gr = f->tensors().find(p + ".greedy");
        if (lg == f->tensors().end() || gr == f->tensors().end()) throw Error(path + ": " + p + " lacks logits or greedy");
        out.push_back({p, as_vec<int32_t>(ids->second), as_vec<int32_t>(gr->second), as_vec<float>(lg->second)});
    }
    if (out.empty()) throw Error(path + ": no promptN.ids tensors");
    return out;
}

int argmax(const float* v, int64_t n) {
    int best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (v[i] > v[best]) best = static_cast<int>(i);
    return best;
}

// What the checks step: the worker processes (the default) or an in-process engine (--in-process).
struct Stepper {
    int64_t vocab = 0;
    int block = 0;
    std::function<void(const engine::StepBatch&, std::vector<float>&)> step;
};

// Runs prompts together: one prefill step for all, then lockstep greedy decode.
struct Result {
    std::vector<std::vector<float>> logits;  // per prompt, [len, vocab]
    std::vector<std::vector<int32_t>> greedy;
};

Result run(Stepper& eng, const std::vector<const Prompt*>& ps, size_t n_greedy) {
    const int64_t V = eng.vocab;
    const int block = eng.block;
    size_t longest = 0;
    for (auto* p : ps) longest = std::max(longest, p->ids.size() + n_greedy);
    const int32_t stride = static_cast<int32_t>((longest + block - 1) / block);
    std::vector<int32_t> tables;
    for (size_t s = 0; s < ps.size(); ++s)
        for (int32_t b = 0; b < stride; ++b) tables.push_back(static_cast<int32_t>(s) * stride + b);
    Result r;
    r.logits.resize(ps.size());
    r.greedy.resize(ps.size());
    engine::StepBatch pre;
    pre.cu_seqlens.push_back(0);
    for (size_t s = 0; s < ps.size(); ++s) {
        for (size_t i = 0; i < ps[s]->ids.size(); ++i) {
            pre.out_ids.push_back(static_cast<int32_t>(pre.tokens.size()));
            pre.tokens.push_back(ps[s]->ids[i]);
            pre.positions.push_back(static_cast<int32_t>(i));
        }
        pre.cu_seqlens.push_back(static_cast<int32_t>(pre.tokens.size()));
        pre.seq_ids.push_back(static_cast<int32_t>(s));
    }
    pre.block_tables = tables;
    pre.block_table_stride = stride;
    std::vector<float> lg;
    eng.step(pre, lg);
    std::vector<int32_t> next(ps.size());
    for (size_t s = 0; s < ps.size(); ++s) {
        const size_t off = static_cast<size_t>(pre.cu_seqlens[s]) * V, len = ps[s]->ids.size();
        r.logits[s].assign(lg.begin() + off, lg.begin() + off + len * V);
        next[s] = argmax(&lg[off + (len - 1) * V], V);
        r.greedy[s].push_back(next[s]);
    }
    for (size_t t = 1; t < n_greedy; ++t) {
        engine::StepBatch dec;
        dec.cu_seqlens.push_back(0);
        for (size_t s = 0; s < ps.size(); ++s) {
            dec.tokens.push_back(next[s]);
            dec.positions.push_back(static_cast<int32_t>(ps[s]->ids.size() + t - 1));
            dec.out_ids.push_back(static_cast<int32_t>(s));
            dec.cu_seqlens.push_back(static_cast<int32_t>(s + 1));
            dec.seq_ids.push_back(static_cast<int32_t>(s));
        }
        dec.n_seq_decode = static_cast<int32_t>(ps.size());
        dec.block_tables = tables;
        dec.block_table_stride = stride;
        eng.step(dec, lg);
        for (size_t s = 0; s < ps.size(); ++s) {
            next[s] = argmax(&lg[s * V], V);
            r.greedy[s].push_back(next[s]);
        }
    }
    return r;
}

// Continuous batching as the scheduler runs it: sequences arrive one step apart, each prompt is
// prefilled in chunks of `chunk` tokens beside the decode rows of the sequences already running
// (decode rows first), so most steps are mixed.
Result run_mixed(Stepper& eng, const std::vector<const Prompt*>& ps, size_t n_greedy, size_t chunk) {
    const int64_t V = eng.vocab;
    const int block = eng.block;
    size_t longest = 0;
    for (auto* p : ps) longest = std::max(longest, p->ids.size() + n_greedy);
    const int32_t stride = static_cast<int32_t>((longest + block - 1) / block);
    struct Seq {
        size_t prefilled = 0;
        std::vector<int32_t> out;
        bool started = false;
    };
    std::vector<Seq> seqs(ps.size());
    Result r;
    r.logits.resize(ps.size());
    r.greedy.resize(ps.size());
    for (size_t step = 0;; ++step) {
        if (step < ps.size()) seqs[step].started = true;
        engine::StepBatch b;
        b.cu_seqlens.push_back(0);
        std::vector<std::pair<size_t, bool>> rows;  // (sequence, is-decode) in batch order
        for (size_t s = 0; s < ps.size(); ++s)  // decode rows first
            if (seqs[s].started && seqs[s].prefilled == ps[s]->ids.size() && seqs[s].out.size() < n_greedy) {
                b.tokens.push_back(seqs[s].out.back());
                b.positions.push_back(static_cast<int32_t>(ps[s]->ids.size() + seqs[s].out.size() - 1));
                b.out_ids.push_back(static_cast<int32_t>(b.tokens.size() - 1));
                b.cu_seqlens.push_back(static_cast<int32_t>(b.tokens.size()));
                b.seq_ids.push_back(static_cast<int32_t>(s));
                rows.push_back({s, true});
            }
        b.n_seq_decode = static_cast<int32_t>(rows.size());
        for (size_t s = 0; s < ps.size(); ++s)
            if (seqs[s].started && seqs[s].prefilled < ps[s]->ids.size()) {
                const size_t from = seqs[s].prefilled, to = std::min(ps[s]->ids.size(), from + chunk);
                for (size_t i = from; i < to; ++i) {
                    b.out_ids.push_back(static_cast<int32_t>(b.tokens.size()));
                    b.tokens.push_back(ps[s]->ids[i]);
                    b.positions.push_back(static_cast<int32_t>(i));
                }
                b.cu_seqlens.push_back(static_cast<int32_t>(b.tokens.size()));
                b.seq_ids.push_back(static_cast<int32_t>(s));
                rows.push_back({s, false});
            }
        if (rows.empty()) break;
        for (auto& [s, dec] : rows)
            for (int32_t x = 0; x < stride; ++x) b.block_tables.push_back(static_cast<int32_t>(s) * stride + x);
        b.block_table_stride = stride;
        std::vector<float> lg;
        eng.step(b, lg);
        size_t out_row = 0;
        for (size_t k = 0; k < rows.size(); ++k) {
            auto [s, dec] = rows[k];
            const size_t n = static_cast<size_t>(b.cu_seqlens[k + 1] - b.cu_seqlens[k]);
            if (!dec) {
                r.logits[s].insert(r.logits[s].end(), lg.begin() + out_row * V, lg.begin() + (out_row + n) * V);
                seqs[s].prefilled += n;
            }
            if (dec || seqs[s].prefilled == ps[s]->ids.size())
                seqs[s].out.push_back(argmax(&lg[(out_row + n - 1) * V], V));
            out_row += n;
        }
    }
    for (size_t s = 0; s < ps.size(); ++s) r.greedy[s] = seqs[s].out;
    return r;
}

double rel_err(const std::vector<float>& a, const std::vector<float>& ref) {
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size() && i < ref.size(); ++i) {
        double d = static_cast<double>(a[i]) - ref[i];
        num += d * d;
        den += static_cast<double>(ref[i]) * ref[i];
    }
    if (a.size() != ref.size()) return INFINITY;
    return std::sqrt(num) / std::sqrt(den > 0 ? den : 1.0);
}

std::string ids_str(const std::vector<int32_t>& v) {
    std::ostringstream os;
    for (size_t i = 0; i < v.size(); ++i) os << (i ? " " : "") << v[i];
    return os.str();
}

}  // namespace

int main(int argc, char** argv) {
    std::string dir, kernels, homes;
    double tol = 1e-4;
    int tp = 1;
    bool in_process = false;
    bool debug_selection = false;
    std::string transport = "shm";
    std::string placement = "auto";
    bool graphs = true;
    double top1 = -1;
    std::string model_file;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << "rad-golden: " << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--kernels") kernels = value();
        else if (a == "--radiance-home") homes = value();
        else if (a == "--tol") tol = std::stod(value());
        else if (a == "--tp") tp = std::stoi(value());
        else if (a == "--in-process") in_process = true;
        else if (a == "--placement") placement = value();
        else if (a == "--no-graphs") graphs = false;
        else if (a == "--top1") top1 = std::stod(value());
        else if (a == "--debug-selection") debug_selection = true;
        else if (a == "--transport") transport = value();
        else if (a == "--model") model_file = value();
        else if (dir.empty()) dir = a;
        else {
            std::cerr << "usage: rad-golden DIR [--tp N] [--kernels LIST] [--tol X]\n";
            return 2;
        }
    }
    if (dir.empty()) {
        std::cerr << "usage: rad-golden DIR [--tp N] [--kernels LIST] [--tol X]\n";
        return 2;
    }
    int passed = 0, failed = 0;
    auto check = [&](bool ok, const std::string& line) {
        std::printf("%s %s\n", ok ? "PASS" : "FAIL", line.c_str());
        (ok ? passed : failed)++;
    };
    fs::path norm = fs::path(dir).lexically_normal();
    if (norm.filename().empty()) norm = norm.parent_path();
    const std::string label = norm.filename().string();
    const bool converted = !model_file.empty();
    std::string tmp = converted ? model_file
                                : (fs::temp_directory_path() / ("rad_golden_" + std::to_string(getpid()) + ".rad")).string();
    try {
        log::set_level(log::Level::warn);
        core::LoadOptions lo = core::load_options(homes, kernels);
        auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
        convert::ConvertOptions co;
        co.src = dir;
        co.out = tmp;
        std::ostringstream convert_log;
        if (!converted) convert::convert(*reg, co, convert_log);
        auto prompts = load_golden((fs::path(dir) / "golden.safetensors").string());
        size_t total = 0, n_greedy = 0;
        for (auto& p : prompts) {
            total += p.ids.size();
            n_greedy = std::max(n_greedy, p.greedy.size());
        }
        engine::EngineOptions eo;
        eo.max_tok = static_cast<int>(std::max<size_t>(total, 16));
        eo.max_out_rows = eo.max_tok;
        eo.max_seqs = static_cast<int>(prompts.size());
        eo.max_ctx = static_cast<int>(total + n_greedy + 16);
        eo.select.accept_reference = true;  // this tool exists to check against the reference
        eo.placement = placement;
        eo.graphs = graphs;
        Stepper stepper;
        std::unique_ptr<engine::Engine> local;
        std::unique_ptr<frontend::WorkerGroup> group;
        if (in_process) {
            auto model = std::shared_ptr<const container::Reader>(container::Reader::open(tmp));
            local = engine::Engine::create(reg, model, eo);
            if (debug_selection) std::fputs(local->selection_report().c_str(), stderr);
            stepper = {local->vocab(), local->kv_block_size(),
                       [&](const engine::StepBatch& b, std::vector<float>& lg) { local->step(b, lg); }};
        } else {
            frontend::GroupOptions go;
            go.world_size = tp;
            go.model_path = tmp;
            go.max_tok = eo.max_tok;
            go.max_seqs = eo.max_seqs;
            go.max_ctx = eo.max_ctx;
            go.max_out_rows = eo.max_out_rows;
            go.kernels = kernels;
            go.radiance_home = homes;
            go.accept_reference = true;
            go.return_logits = true;
            go.placement = placement;
            go.graphs = graphs;
            go.force_grpc = transport == "grpc";
            if (debug_selection) go.worker_args.push_back("--debug-selection");
            auto meta = container::Reader::open(tmp)->meta();
            go.vocab = meta.count("model.n_vocab") ? meta.at("model.n_vocab").i : 0;
            group = std::make_unique<frontend::WorkerGroup>(go);
            group->start();
            if (!group->wait_ready(std::chrono::seconds(120)))
                throw Error("the workers did not become ready: " + (group->failure().empty() ? "timeout" : group->failure()));
            frontend::PlanInfo plan = group->plan();
            stepper = {plan.vocab, plan.kv_block_size, [&](const engine::StepBatch& b, std::vector<float>& lg) {
                           ipc::StepMessage m;
                           m.batch = b;
                           m.want_logits = true;
                           m.samples.resize(b.out_ids.size());  // greedy specs: the workers sample too
                           ipc::ResultMessage r = group->step(m);
                           lg = std::move(r.logits);
                       }};
        }
        auto& eng = stepper;
        int64_t top1_agree = 0, top1_rows = 0;
        auto report = [&](const std::string& mode, const Prompt& p, const std::vector<float>& lg, const std::vector<int32_t>& gr) {
            const double e = rel_err(lg, p.logits);
            char buf[256];
            std::snprintf(buf, sizeof buf, "%s %s %s logits rel_err=%.3g (tol %.3g)", label.c_str(), p.name.c_str(), mode.c_str(), e, tol);
            check(e <= tol, buf);
            std::vector<int32_t> want(p.greedy.begin(), p.greedy.end());
            bool same = gr == want;
            if (top1 >= 0) {
                const int64_t V = eng.vocab, rows = static_cast<int64_t>(p.ids.size());
                int64_t agree = 0;
                for (int64_t i = 0; i < rows && static_cast<size_t>((i + 1) * V) <= lg.size(); ++i)
                    agree += argmax(&lg[i * V], V) == argmax(&p.logits[i * V], V);
                top1_agree += agree;
                top1_rows += rows;
                if (agree != rows)
                    std::printf("note: %s %s %s teacher-forced top-1 %lld/%lld\n", label.c_str(), p.name.c_str(), mode.c_str(),
                                static_cast<long long>(agree), static_cast<long long>(rows));
                if (!same) std::printf("note: %s %s %s greedy differs: got [%s] want [%s]\n", label.c_str(), p.name.c_str(),
                                       mode.c_str(), ids_str(gr).c_str(), ids_str(want).c_str());
                return;
            }
            check(same, label + " " + p.name + " " + mode + " greedy " + std::to_string(want.size()) + " tokens" +
                            (same ? "" : ": got [" + ids_str(gr) + "] want [" + ids_str(want) + "]"));
        };
        for (auto& p : prompts) {
            Result r = run(eng, {&p}, p.greedy.size());
            report("alone", p, r.logits[0], r.greedy[0]);
        }
        std::vector<const Prompt*> all;
        for (auto& p : prompts) all.push_back(&p);
        Result r = run(eng, all, n_greedy);
        for (size_t s = 0; s < prompts.size(); ++s) {
            r.greedy[s].resize(prompts[s].greedy.size());
            report("batched", prompts[s], r.logits[s], r.greedy[s]);
        }
        Result mx = run_mixed(eng, all, n_greedy, 5);
        for (size_t s = 0; s < prompts.size(); ++s) {
            mx.greedy[s].resize(prompts[s].greedy.size());
            report("mixed", prompts[s], mx.logits[s], mx.greedy[s]);
        }
        if (top1 >= 0) {  // over every prompt position of every mode
            const double frac = top1_rows ? static_cast<double>(top1_agree) / static_cast<double>(top1_rows) : 0.0;
            char buf[256];
            std::snprintf(buf, sizeof buf, "%s teacher-forced top-1 agreement %.4f (%lld/%lld positions, need %.3g)", label.c_str(),
                          frac, static_cast<long long>(top1_agree), static_cast<long long>(top1_rows), top1);
            check(frac >= top1, buf);
        }
        if (group) group->shutdown();
    } catch (const std::exception& e) {
        check(false, label + ": " + e.what());
    }
    std::error_code ec;
    if (!converted) fs::remove(tmp, ec);
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
