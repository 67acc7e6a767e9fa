// rad-golden DIR [--tp N] [--kernels LIST] [--tol X] [--radiance-home HOMES] [--transport shm|grpc] [--in-process]
//                [--placement auto|host|device] [--no-graphs] [--top1 FRAC] [--model FILE.rad] [--decode-ref FILE]
//                [--bitwise] [--deterministic] [--kv-cache-dtype D]
//
// Converts the checkpoint in DIR (or takes --model, that checkpoint already converted: big ones)
// and runs the prompts of DIR/golden.safetensors (promptN.ids, .logits, .greedy: transformers'
// float32 outputs) alone, all together in one batch, and mixed as the scheduler runs them
// (runs.h), through radiance-worker processes (one per rank) as a server runs them, or with
// --in-process through an engine in this process. Logits are compared as the relative error
// ||ours - ref|| / ||ref||.
//
// With decode references (DIR/decode.safetensors or --decode-ref: transformers' logits at every
// position of the greedy continuation, tools/golden/decode_refs.py) each mode runs twice:
//   teacher-forced: every decode step is fed the reference's token, and each step's logits are
//     compared with transformers' (tol) as the prompt's are, and their top-1 with the reference's;
//   free-running greedy: tokens picked where the logits are (the card's argmax op; in-process on a
//     card, decode steps queued pipelined and fed on the card) against transformers' greedy tokens.
// Without --top1 (host libraries) both must agree exactly. With --top1 FRAC (a bf16 card path) the
// share of prompt and decode positions whose top-1 is the reference's must reach FRAC, every
// position that differs must be a near-tie, and the free run is compared up to its first
// difference, which must be a near-tie too. A near-tie: the reference's gap between its token and
// ours is within kTieSigmas of the row's own observed error (ours teacher-forced against the
// reference at that very position) capped at the tolerance, so a flip that an error within
// tolerance explains passes, and a wrong token from a step that computed the wrong thing, or a
// free run that went astray while the teacher-forced step was right, does not.
// Without decode references only the prompt logits and the greedy tokens (fed back by the host's
// argmax) are checked; with --top1 a greedy difference is then only noted.
// --bitwise: the batch-invariance probe (bitwise.h) instead, on DIR's prompts, or on synthetic
// ones (synthetic.h) where DIR has no golden.safetensors; --deterministic asks the engine for its
// batch-invariant kernels (EngineOptions::deterministic).
// One line per check, then "N passed, M failed"; exit 0 only if all pass.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "golden_file.h"
#include "radiance/convert/convert.h"
#include "radiance/engine/engine.h"
#include "radiance/util/args.h"
#include "radiance/util/error.h"
#include "radiance/util/kv_cache_dtype.h"
#include "radiance/util/log.h"
#include "bitwise.h"
#include "synthetic.h"
#include "runs.h"
#include "worker_group.h"

using namespace radiance;
using namespace radiance::golden;
namespace fs = std::filesystem;

namespace {

// Two logits whose errors have an rms of sigma differ by more than 6 sigma (4.2 standard
// deviations of their difference) about 3 times in 100,000: a flip with a larger gap is not noise.
constexpr double kTieSigmas = 6.0;

double rel_err(const std::vector<float>& a, const std::vector<float>& ref) {
    if (a.size() != ref.size()) return INFINITY;
    double num = 0, den = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        double d = static_cast<double>(a[i]) - ref[i];
        num += d * d;
        den += static_cast<double>(ref[i]) * ref[i];
    }
    return std::sqrt(num) / std::sqrt(den > 0 ? den : 1.0);
}

struct Tie {
    bool is_tie = false;
    double gap = 0, bound = 0;
};

// Whether our row picking `got` where the reference's row picks `want` is a near-tie. The row's
// error counts only as far as the tolerance allows (rms tol * rms(ref)): a row that computed the
// wrong thing explains no flip.
Tie near_tie(const float* ours, const float* ref, int64_t V, int want, int got, double tol) {
    double se = 0, sr = 0;
    for (int64_t i = 0; i < V; ++i) {
        se += (static_cast<double>(ours[i]) - ref[i]) * (static_cast<double>(ours[i]) - ref[i]);
        sr += static_cast<double>(ref[i]) * ref[i];
    }
    Tie t;
    t.bound = kTieSigmas * std::sqrt(std::min(se, tol * tol * sr) / static_cast<double>(V));
    t.gap = static_cast<double>(ref[want]) - ref[got];
    t.is_tie = t.gap <= t.bound;
    return t;
}

std::string ids_str(const std::vector<int32_t>& v) {
    std::ostringstream os;
    for (size_t i = 0; i < v.size(); ++i) os << (i ? " " : "") << v[i];
    return os.str();
}

std::string fmt(const char* f, double a, double b = 0, double c = 0) {
    char buf[256];
    std::snprintf(buf, sizeof buf, f, a, b, c);
    return buf;
}

struct Options {
    std::string dir, kernels, homes, transport = "shm", placement = "auto", model_file, decode_ref;
    std::string kv_cache;  // --kv-cache-dtype as parse_kv_cache_dtype names it ("": the placement's default)
    double tol = 1e-4, top1 = -1;
    int tp = 1;
    bool in_process = false, debug_selection = false, graphs = true;
    bool bitwise = false;  // the batch-invariance probe (bitwise.h) in place of the checks against transformers
    bool deterministic = false;  // --deterministic: EngineOptions::deterministic, on every rank
};

[[noreturn]] void usage() {
    std::cerr << "usage: rad-golden DIR [--tp N] [--kernels LIST] [--tol X] [--top1 FRAC] [--in-process] [--placement P]\n"
                 "                  [--transport shm|grpc] [--no-graphs] [--model FILE.rad] [--decode-ref FILE] [--radiance-home H]\n"
                 "                  [--bitwise]   (the same positions computed every way a server does, compared bit for bit)\n"
                 "                  [--deterministic]   (batch-invariant kernels: docs/OPS.md general rules)\n"
                 "                  [--kv-cache-dtype auto|fp8|fp8_e4m3|bf16|f32]\n";
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    try {
        util::Args args(argc, argv);
        while (args.next()) {
            if (args.is("--kernels"))
                o.kernels = args.value();
            else if (args.is("--radiance-home"))
                o.homes = args.value();
            else if (args.is("--tol"))
                o.tol = args.real(0, 1e9);
            else if (args.is("--tp"))
                o.tp = static_cast<int>(args.integer(1, 64));
            else if (args.is("--in-process"))
                o.in_process = true;
            else if (args.is("--placement"))
                o.placement = args.value();
            else if (args.is("--no-graphs"))
                o.graphs = false;
            else if (args.is("--top1"))
                o.top1 = args.real(0, 1);
            else if (args.is("--debug-selection"))
                o.debug_selection = true;
            else if (args.is("--transport"))
                o.transport = args.value();
            else if (args.is("--model"))
                o.model_file = args.value();
            else if (args.is("--decode-ref"))
                o.decode_ref = args.value();
            else if (args.is("--bitwise"))
                o.bitwise = true;
            else if (args.is("--deterministic"))
                o.deterministic = true;
            else if (args.is("--kv-cache-dtype"))
                o.kv_cache = parse_kv_cache_dtype(args.value());
            else if (o.dir.empty() && args.positional())
                o.dir = args.current();
            else
                usage();
        }
    } catch (const std::exception& e) {  // ArgsError, or a --kv-cache-dtype word not known
        std::cerr << "rad-golden: " << e.what() << "\n";
        std::exit(2);
    }
    if (o.dir.empty()) usage();
    return o;
}

// The checks of one mode's runs against the references.
class Checker {
public:
    Checker(std::string label, const Options& o, int64_t V) : label_(std::move(label)), o_(o), V_(V) {}

    void check(bool ok, const std::string& line) {
        std::printf("%s %s\n", ok ? "PASS" : "FAIL", line.c_str());
        (ok ? passed_ : failed_)++;
    }
    int failed() const { return failed_; }
    int passed() const { return passed_; }

    void logits(const Prompt& p, const std::string& mode, const char* what, const std::vector<float>& ours, const std::vector<float>& ref,
                size_t rows) {
        const double e = rel_err(ours, ref);
        check(e <= o_.tol, name(p, mode) + " " + what + " logits rel_err=" + fmt("%.3g", e) + " over " + std::to_string(rows) +
                               " positions (tol " + fmt("%.3g", o_.tol) + ")");
    }

    // Teacher-forced top-1 at every prompt and decode position: each difference must be a near-tie.
    void top1(const Prompt& p, const std::string& mode, const Run& r, size_t s) {
        int64_t agree = 0, rows = 0;
        std::string untied;
        auto row = [&](const float* ours, const float* ref, const std::string& where) {
            const int want = argmax(ref, V_), got = argmax(ours, V_);
            rows++;
            if (want == got) return void(agree++);
            Tie t = near_tie(ours, ref, V_, want, got, o_.tol);
            if (!t.is_tie && untied.empty())
                untied = where + ": " + std::to_string(got) + " for " + std::to_string(want) + fmt(", gap %.3g > %.3g", t.gap, t.bound);
        };
        const size_t n = p.ids.size(), g = r.decode_logits[s].size() / V_;
        for (size_t i = 0; i < n && (i + 1) * V_ <= r.logits[s].size(); ++i)
            row(&r.logits[s][i * V_], &p.logits[i * V_], "prompt position " + std::to_string(i));
        for (size_t k = 0; k < g && k < p.fed.size(); ++k)
            row(&r.decode_logits[s][k * V_], &p.decode_logits[k * V_], "decode step " + std::to_string(k));
        agree_ += agree;
        rows_ += rows;
        check(untied.empty() && (o_.top1 >= 0 || agree == rows), name(p, mode) + " teacher-forced top-1 " + std::to_string(agree) + "/" +
                                                                     std::to_string(rows) +
                                                                     (agree == rows  ? ""
                                                                      : o_.top1 >= 0 ? ", the rest near-ties"
                                                                                     : ", exact agreement required") +
                                                                     (untied.empty() ? "" : ": not a near-tie at " + untied));
    }

    // The free-running greedy tokens against transformers'. `tf` is the teacher-forced run of the
    // same mode (nullptr: no decode references), whose rows judge a first difference.
    void greedy(const Prompt& p, const std::string& mode, const std::vector<int32_t>& got_all, const Run* tf, size_t s,
                const std::string& how) {
        std::vector<int32_t> got(got_all.begin(), got_all.begin() + std::min(got_all.size(), p.greedy.size()));
        const std::string head = name(p, mode) + " greedy" + how + " " + std::to_string(p.greedy.size()) + " tokens";
        if (got == p.greedy) return check(true, head);
        const std::string diff = ": got [" + ids_str(got) + "] want [" + ids_str(p.greedy) + "]";
        if (o_.top1 < 0) return check(false, head + diff);
        if (!tf) return void(std::printf("note: %s differs%s\n", head.c_str(), diff.c_str()));
        size_t k = 0;
        while (k < got.size() && got[k] == p.greedy[k]) k++;
        if (k == got.size()) return check(false, head + ": ended after " + std::to_string(k) + diff);
        // Token k was picked after the prompt (k = 0) or after decode step k - 1.
        const size_t n = p.ids.size();
        const float* ours = k == 0 ? &tf->logits[s][(n - 1) * V_] : &tf->decode_logits[s][(k - 1) * V_];
        const float* ref = k == 0 ? &p.logits[(n - 1) * V_] : &p.decode_logits[(k - 1) * V_];
        Tie t = near_tie(ours, ref, V_, p.greedy[k], got[k], o_.tol);
        check(t.is_tie, name(p, mode) + " greedy" + how + " agrees for " + std::to_string(k) + "/" + std::to_string(p.greedy.size()) +
                            " tokens, then " + (t.is_tie ? "a near-tie" : "NOT a near-tie") +
                            fmt(" (reference gap %.3g, bound %.3g)", t.gap, t.bound) + diff);
    }

    void top1_total() {
        if (o_.top1 < 0 || rows_ == 0) return;
        const double frac = static_cast<double>(agree_) / static_cast<double>(rows_);
        check(frac >= o_.top1, label_ + " teacher-forced top-1 agreement " + fmt("%.4f", frac) + " (" + std::to_string(agree_) + "/" +
                                   std::to_string(rows_) + " positions, need " + fmt("%.3g", o_.top1) + ")");
    }

private:
    std::string name(const Prompt& p, const std::string& mode) const { return label_ + " " + p.name + " " + mode; }
    std::string label_;
    const Options& o_;
    int64_t V_;
    int passed_ = 0, failed_ = 0;
    int64_t agree_ = 0, rows_ = 0;
};

// Prompt-position top-1 agreement without decode references (the fraction --top1 asks for).
void prompt_top1(const Prompt& p, const Run& r, size_t s, int64_t V, int64_t& agree, int64_t& rows) {
    for (size_t i = 0; i < p.ids.size() && (i + 1) * V <= r.logits[s].size(); ++i, ++rows)
        agree += argmax(&r.logits[s][i * V], V) == argmax(&p.logits[i * V], V);
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    fs::path norm = fs::path(o.dir).lexically_normal();
    if (norm.filename().empty()) norm = norm.parent_path();
    const std::string label = norm.filename().string();
    const bool converted = !o.model_file.empty();
    std::string tmp = converted ? o.model_file : (fs::temp_directory_path() / ("rad_golden_" + std::to_string(getpid()) + ".rad")).string();
    std::unique_ptr<Checker> ck;
    int setup_failed = 0;
    try {
        log::set_level(log::Level::warn);
        core::LoadOptions lo = core::load_options(o.homes, o.kernels);
        auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
        convert::ConvertOptions co;
        co.src = o.dir;
        co.out = tmp;
        std::ostringstream convert_log;
        if (!converted) convert::convert(*reg, co, convert_log);
        // --bitwise compares the engine with itself: a checkpoint without references (the demo
        // model) gets synthetic prompts.
        const fs::path golden = fs::path(o.dir) / "golden.safetensors";
        auto prompts = o.bitwise && !fs::exists(golden) ? synthetic_prompts(container::Reader::open(tmp)->meta().at("model.n_vocab").i)
                                                       : load_golden(golden.string());
        size_t total = 0, n_greedy = 0, whole = 0;
        for (auto& p : prompts) {
            total += p.ids.size();
            n_greedy = std::max(n_greedy, p.greedy.size());
            whole = std::max(whole, p.ids.size() + p.greedy.size());  // --bitwise recomputes a prompt and its decode in one step
        }
        engine::EngineOptions eo;
        eo.max_tok = static_cast<int>(std::max<size_t>({total, o.bitwise ? whole : 0, 16}));
        eo.max_out_rows = eo.max_tok;
        eo.max_seqs = static_cast<int>(prompts.size());
        eo.max_ctx = static_cast<int>(total + n_greedy + 16);
        eo.select.accept_reference = true;  // this tool exists to check against the reference
        eo.placement = o.placement;
        eo.graphs = o.graphs;
        eo.kv_dtype = engine::kv_dtype_of(o.kv_cache);
        eo.deterministic = o.deterministic;
        Stepper st;
        std::unique_ptr<engine::Engine> local;
        std::unique_ptr<frontend::WorkerGroup> group;
        if (o.in_process) {
            auto model = std::shared_ptr<const container::Reader>(container::Reader::open(tmp));
            local = engine::Engine::create(reg, model, eo);
            if (o.debug_selection) std::fputs(local->selection_report().c_str(), stderr);
            st.vocab = local->vocab();
            st.block = local->kv_block_size();
            st.logits = [&](const engine::StepBatch& b, std::vector<float>& lg) { local->step(b, lg); };
            st.greedy = [&](const engine::StepBatch& b, std::vector<int32_t>& toks) {
                std::vector<engine::CardDraw> draws(b.out_ids.size());
                for (auto& d : draws) d.on_card = true;
                std::vector<float> lg;
                local->step(b, lg, draws, toks);
                if (!toks.empty()) return;
                for (size_t i = 0; i < b.out_ids.size(); ++i) toks.push_back(argmax(&lg[i * local->vocab()], local->vocab()));
            };
            if (local->placement() != "host") st.pipelined = local.get();
        } else {
            frontend::GroupOptions go;
            go.world_size = o.tp;
            go.model_path = tmp;
            go.max_tok = eo.max_tok;
            go.max_seqs = eo.max_seqs;
            go.max_ctx = eo.max_ctx;
            go.max_out_rows = eo.max_out_rows;
            go.kernels = o.kernels;
            go.radiance_home = o.homes;
            go.accept_reference = true;
            go.return_logits = true;
            go.placement = o.placement;
            go.graphs = o.graphs;
            go.kv_cache_dtype = o.kv_cache;
            go.deterministic = o.deterministic;
            go.force_grpc = o.transport == "grpc";
            if (o.debug_selection) go.worker_args.push_back("--debug-selection");
            auto meta = container::Reader::open(tmp)->meta();
            go.vocab = meta.count("model.n_vocab") ? meta.at("model.n_vocab").i : 0;
            group = std::make_unique<frontend::WorkerGroup>(go);
            group->start();
            if (!group->wait_ready(std::chrono::seconds(120)))
                throw Error("the workers did not become ready: " + (group->failure().empty() ? "timeout" : group->failure()));
            frontend::PlanInfo plan = group->plan();
            st.vocab = plan.vocab;
            st.block = plan.kv_block_size;
            // Every out row gets a greedy spec, so the workers pick its token too: on the logits path
            // from the logits they send back, otherwise where the logits are (the card's argmax).
            auto send = [&](const engine::StepBatch& b, bool want_logits) {
                ipc::StepMessage m;
                m.batch = b;
                m.want_logits = want_logits;
                m.samples.resize(b.out_ids.size());
                ipc::ResultMessage r = group->step(m);
                if (r.status != 0) throw Error("step failed: " + r.error);
                return r;
            };
            st.logits = [&, send](const engine::StepBatch& b, std::vector<float>& lg) { lg = send(b, true).logits; };
            st.greedy = [&, send](const engine::StepBatch& b, std::vector<int32_t>& toks) {
                toks.clear();
                for (auto& s : send(b, false).tokens) toks.push_back(s.token);
            };
        }
        const std::string decode_ref = !o.decode_ref.empty() ? o.decode_ref : (fs::path(o.dir) / "decode.safetensors").string();
        const bool have_decode = !o.decode_ref.empty() || fs::exists(decode_ref);
        if (have_decode) load_decode(decode_ref, prompts, st.vocab);
        ck = std::make_unique<Checker>(label, o, st.vocab);
        std::vector<const Prompt*> all, chunkable;
        for (auto& p : prompts) all.push_back(&p);
        // LongRoPE turns a sequence by its long factors once it reaches the original context, by
        // its last row (docs/OPS.md, rope): a prompt prefilled in one step past that length is
        // turned long throughout, as transformers does, but chunks before it are turned short, as
        // transformers and vLLM also do when they chunk. Such prompts sit out the chunked mode.
        const int64_t longrope_from = [&]() -> int64_t {
            const auto meta = container::Reader::open(tmp)->meta();
            const auto type = meta.find("rope.type"), orig = meta.find("rope.orig_ctx");
            if (type == meta.end() || type->second.s != "longrope" || orig == meta.end()) return 0;
            return orig->second.i;
        }();
        for (auto& p : prompts)
            if (longrope_from <= 0 || static_cast<int64_t>(p.ids.size()) <= longrope_from)
                chunkable.push_back(&p);
            else
                std::printf("SKIP %s %s mixed: a LongRoPE prompt of %zu tokens, past the original context (%lld), chunked would "
                            "turn its first chunks by the short factors\n",
                            label.c_str(), p.name.c_str(), p.ids.size(), static_cast<long long>(longrope_from));
        int64_t agree = 0, rows = 0;  // prompt positions only, without decode references
        auto mode = [&](const std::string& name, const std::vector<const Prompt*>& ps, auto&& runner) {
            if (!have_decode) {  // the prompts' logits, and greedy tokens fed back by the host's argmax
                Run r = runner(Feed::argmax);
                for (size_t s = 0; s < ps.size(); ++s) {
                    ck->logits(*ps[s], name, "prompt", r.logits[s], ps[s]->logits, ps[s]->ids.size());
                    prompt_top1(*ps[s], r, s, st.vocab, agree, rows);
                    ck->greedy(*ps[s], name, r.tokens[s], nullptr, s, "");
                }
                return;
            }
            Run tf = runner(Feed::teacher);
            Run free = runner(Feed::picked);
            for (size_t s = 0; s < ps.size(); ++s) {
                const Prompt& p = *ps[s];
                ck->logits(p, name, "prompt", tf.logits[s], p.logits, p.ids.size());
                ck->logits(p, name, "teacher-forced decode", tf.decode_logits[s], p.decode_logits, p.fed.size());
                ck->top1(p, name, tf, s);
                ck->greedy(p, name, free.tokens[s], &tf, s, free.was_pipelined ? " (pipelined on the card)" : " (picked)");
            }
        };
        if (o.bitwise) {
            bitwise_probe(st, prompts, [&](const BitwiseVerdict& v) { ck->check(v.ok, label + " " + v.line); });
        } else {
            for (auto& p : prompts) mode("alone", {&p}, [&](Feed f) { return run_together(st, {&p}, f); });
            mode("batched", all, [&](Feed f) { return run_together(st, all, f); });
            if (!chunkable.empty()) mode("mixed", chunkable, [&](Feed f) { return run_mixed(st, chunkable, f, 5); });
            if (have_decode)
                ck->top1_total();
            else if (o.top1 >= 0) {
                const double frac = rows ? static_cast<double>(agree) / static_cast<double>(rows) : 0.0;
                ck->check(frac >= o.top1, label + " prompt top-1 agreement " + fmt("%.4f", frac) + " (" + std::to_string(agree) + "/" +
                                              std::to_string(rows) + " positions, need " + fmt("%.3g", o.top1) + ")");
            }
        }
        if (group) group->shutdown();
    } catch (const std::exception& e) {
        std::printf("FAIL %s: %s\n", label.c_str(), e.what());
        setup_failed = 1;
    }
    std::error_code ec;
    if (!converted) fs::remove(tmp, ec);
    const int passed = ck ? ck->passed() : 0, failed = (ck ? ck->failed() : 0) + setup_failed;
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
