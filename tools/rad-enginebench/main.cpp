// rad-enginebench MODEL.rad|CONFIG_FOLDER [--recipe R] [--placement P] [--prefill N,...] [--decode B,...] [--in N] [--out N]
//                 [--chunk N] [--kernels LIST] [--radiance-home HOMES] [--no-graphs] [--tokens] [--kv-f32] [--tp N]
//                 [--kv-cache-dtype auto|fp8|fp8_e4m3|bf16|f32] (--kv-f32 is --kv-cache-dtype f32)
//                 [--sample T,TOP_K,TOP_P,MIN_P] [--mixed P] [--lockstep] [--deterministic]
//
// The engine's own speed, without the front end: one engine in this process, random prompt ids
// (seeded), greedy tokens picked by the engine (on the card when the plan is there, else from the
// logits on the host). Prints a table:
//   prefill N   one sequence of N tokens in steps of --chunk tokens; tokens/s over the whole prompt
//   decode B    B sequences of --in prompt tokens each (prefilled first, not timed), then --out
//               decode steps of B rows; generated tokens/s and ms per step. On a card whose ops pick
//               every row's token the steps are pipelined (Engine::enqueue: step t + 1 is queued,
//               its tokens fed on the card, before step t's tokens are read); --lockstep waits for
//               each step's tokens before queueing the next (the host's turnaround exposed)
// The plan is sized for the largest case asked. With --tp N the same benchmark runs as N processes,
// rank r planning its tensor-parallel slice on card r, summing through the collective rows over a
// host-staging communicator as the worker group's (same seeds, so every rank steps in lockstep);
// rank 0 prints. With --mixed P each decode case B also runs as a server's mixed steps: the B
// sequences decode while one more sequence brings a P-token prompt chunk in the same step (a fresh
// chunk every step), reported as "mixed B+P" with its decode tokens/s and ms per step. With --sample the decode steps draw their tokens with those settings (sequence s
// seeded s + 1) instead of greedily: on the card by the `sample` op where the plan has it, else on
// the host by the sampler from the logits, the same token either way. MODEL a folder holding a
// Hugging Face config.json alone: the container is drawn in memory (rad-convert --random-weights 0,
// with --recipe R if given, written into an anonymous memory file, never to disk), for shapes larger
// than the disk beside them (Qwen3-30B-A3B's 61 GB in bf16 on the GPU machine's 64 GB). Numbers go to
// docs/PERFORMANCE.md with the command, machine and date.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>
#include <random>
#include <string>
#include <vector>

#include "radiance/convert/convert.h"
#include "radiance/engine/engine.h"
#include "radiance/ipc/host_comm.h"
#include "radiance/sampling/counter_rng.h"
#include "radiance/sampling/sampler.h"
#include "radiance/util/args.h"
#include "radiance/util/error.h"
#include "radiance/util/kv_cache_dtype.h"
#include "radiance/util/strings.h"

using namespace radiance;
using Clock = std::chrono::steady_clock;

namespace {

std::vector<int> ints(const std::string& s) {
    std::vector<int> v;
    for (auto& p : str::split(s, ","))
        if (!p.empty()) v.push_back(std::stoi(p));
    return v;
}

int32_t argmax(const float* v, int64_t n) { return static_cast<int32_t>(std::max_element(v, v + n) - v); }

// Row i's token as the engine picked it on the card, else the argmax of its logits.
int32_t greedy_token(const std::vector<int32_t>& toks, const std::vector<float>& lg, size_t i, int64_t vocab) {
    return !toks.empty() && toks[i] >= 0 ? toks[i] : argmax(&lg[i * static_cast<size_t>(vocab)], vocab);
}

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Prefills `seqs` sequences (one chunk of rows per step, one sequence at a time) and returns the
// last token's argmax of each.
std::vector<int32_t> prefill(engine::Engine& e, const std::vector<std::vector<int32_t>>& prompts, int chunk, int stride, int seq0) {
    std::vector<int32_t> next, toks;
    std::vector<float> lg;
    for (size_t s = 0; s < prompts.size(); ++s) {
        const auto& p = prompts[s];
        for (size_t at = 0; at < p.size(); at += static_cast<size_t>(chunk)) {
            const size_t n = std::min(p.size() - at, static_cast<size_t>(chunk));
            engine::StepBatch b;
            b.tokens.assign(p.begin() + static_cast<long>(at), p.begin() + static_cast<long>(at + n));
            for (size_t i = 0; i < n; ++i) b.positions.push_back(static_cast<int32_t>(at + i));
            b.cu_seqlens = {0, static_cast<int32_t>(n)};
            b.seq_ids = {static_cast<int32_t>(s)};
            b.out_ids = {static_cast<int32_t>(n - 1)};
            b.block_table_stride = stride;
            for (int k = 0; k < stride; ++k) b.block_tables.push_back((seq0 + static_cast<int32_t>(s)) * stride + k);
            b.n_seq_decode = 0;
            engine::CardDraw greedy;
            greedy.on_card = true;
            e.step(b, lg, {greedy}, toks);
        }
        next.push_back(greedy_token(toks, lg, 0, e.vocab()));
    }
    return next;
}

}  // namespace

// MODEL as a container: the file itself, or for a folder holding config.json one drawn in memory
// (random weights, the recipe's quantisers) through a memory file that the reader maps.
std::shared_ptr<const container::Reader> open_model(const core::Registry& reg, const std::string& model, const std::string& recipe) {
    if (!std::filesystem::is_directory(model)) {
        if (!recipe.empty()) throw Error("--recipe draws a folder's config.json in memory; " + model + " is a container already");
        return container::Reader::open(model);
    }
    // closed on every way out, the reader's open throwing included (its mapping keeps the pages)
    struct MemoryFile {
        int fd = memfd_create("rad-enginebench-weights", MFD_CLOEXEC);
        ~MemoryFile() {
            if (fd >= 0) ::close(fd);
        }
    } file;
    if (file.fd < 0) throw Error(std::string("cannot make a memory file for the drawn weights: ") + std::strerror(errno));
    convert::ConvertOptions co;
    co.src = model;
    co.out_fd = file.fd;
    co.random_weights = true;
    co.recipe = recipe;
    const auto t0 = Clock::now();
    std::ostringstream log;
    convert::convert(reg, co, log);
    auto r = container::Reader::open("/proc/self/fd/" + std::to_string(file.fd));
    std::printf("drew %s's weights in memory%s: %.1f s\n", model.c_str(), recipe.empty() ? "" : (" by the recipe " + recipe).c_str(),
                std::chrono::duration<double>(Clock::now() - t0).count());
    return r;
}

int main(int argc, char** argv) {
    std::string model, kernels, homes, placement = "auto", recipe;
    std::vector<int> prefills{512, 4096}, decodes{1};
    int in = 128, out = 128, chunk = 4096, tp = 1, mixed = 0;
    bool graphs = true, print_tokens = false, lockstep = false;
    bool deterministic = false;  // --deterministic: EngineOptions::deterministic (what batch invariance costs)
    std::string kv_cache;  // parse_kv_cache_dtype's name: "" the placement's default
    std::optional<sampling::SamplingParams> sample;  // --sample: decode draws instead of greedy
    try {
        util::Args args(argc, argv);
        while (args.next()) {
            if (args.is("--placement"))
                placement = args.value();
            else if (args.is("--prefill"))
                prefills = ints(args.value());
            else if (args.is("--decode"))
                decodes = ints(args.value());
            else if (args.is("--in"))
                in = static_cast<int>(args.integer(1, 1 << 20));
            else if (args.is("--out"))
                out = static_cast<int>(args.integer(0, 1 << 20));
            else if (args.is("--chunk"))
                chunk = static_cast<int>(args.integer(1, 1 << 20));
            else if (args.is("--kernels"))
                kernels = args.value();
            else if (args.is("--recipe"))
                recipe = args.value();
            else if (args.is("--radiance-home"))
                homes = args.value();
            else if (args.is("--no-graphs"))
                graphs = false;
            else if (args.is("--tokens"))
                print_tokens = true;
            else if (args.is("--kv-f32"))
                kv_cache = "f32";
            else if (args.is("--kv-cache-dtype"))
                kv_cache = parse_kv_cache_dtype(args.value());
            else if (args.is("--lockstep"))
                lockstep = true;
            else if (args.is("--deterministic"))
                deterministic = true;
            else if (args.is("--tp"))
                tp = static_cast<int>(args.integer(1, 64));
            else if (args.is("--mixed"))
                mixed = static_cast<int>(args.integer(0, 1 << 20));
            else if (args.is("--sample")) {
                const std::vector<std::string> f = str::split(args.value(), ",");
                if (f.size() != 4) throw std::runtime_error("--sample takes T,TOP_K,TOP_P,MIN_P");
                sample.emplace();
                sample->temperature = std::stof(f[0]);
                sample->top_k = std::stoi(f[1]);
                sample->top_p = std::stof(f[2]);
                sample->min_p = std::stof(f[3]);
            } else if (model.empty() && args.positional())
                model = args.current();
            else if (args.positional())
                throw util::ArgsError("unexpected argument " + args.current());
            else
                args.unknown();
        }
    } catch (const std::exception& e) {
        std::cerr << "rad-enginebench: " << e.what() << "\n";
        return 2;
    }
    if (model.empty()) {
        std::cerr << "usage: rad-enginebench MODEL.rad|CONFIG_FOLDER [--recipe R] [--placement auto|host|device] [--prefill N,...] [--decode B,...]\n"
                     "                       [--in N] [--out N] [--chunk N] [--kernels LIST] [--no-graphs] [--tp N]\n"
                     "                       [--sample T,TOP_K,TOP_P,MIN_P] [--mixed P] [--lockstep] [--deterministic]\n";
        return 2;
    }
    if (tp < 1 || tp > 64) {
        std::cerr << "rad-enginebench: --tp must be in [1, 64]\n";
        return 2;
    }
    std::unique_ptr<ipc::HostComm> group;
    int rank = 0;
    RadComm comm{};
    if (tp > 1) {  // one process per rank; the parent only waits
        const std::string name = "/radiance-enginebench-" + std::to_string(getpid());
        group = ipc::HostComm::create(name, tp, 8ull << 20);
        std::vector<pid_t> kids;
        for (int r = 0; r < tp; ++r) {
            const pid_t pid = fork();
            if (pid == 0) {
                rank = r;
                break;
            }
            kids.push_back(pid);
        }
        if (static_cast<int>(kids.size()) == tp) {
            int failed = 0;
            for (pid_t k : kids) {
                int st = 0;
                waitpid(k, &st, 0);
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failed;
            }
            if (failed) std::cerr << "rad-enginebench: " << failed << " rank(s) failed\n";
            return failed ? 1 : 0;
        }
        group.release();  // the parent owns (and unlinks) the segment
        static std::unique_ptr<ipc::HostComm> mine;
        mine = ipc::HostComm::attach(name, rank);
        comm.struct_size = sizeof comm;
        mine->fill(&comm);
        if (rank != 0 && !std::freopen("/dev/null", "w", stdout)) return 1;
    }
    try {
        core::LoadOptions lo = core::load_options(homes, kernels);
        lo.machine.device_ordinal = rank;  // one card per rank
        auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
        auto c = open_model(*reg, model, recipe);
        const int max_prefill = prefills.empty() ? 0 : *std::max_element(prefills.begin(), prefills.end());
        const int max_b = decodes.empty() ? 1 : *std::max_element(decodes.begin(), decodes.end());
        engine::EngineOptions eo;
        eo.placement = placement;
        eo.graphs = graphs;
        eo.select.accept_reference = true;  // a measuring tool: --kernels libref may be the point
        eo.kv_dtype = engine::kv_dtype_of(kv_cache);
        eo.deterministic = deterministic;
        if (tp > 1) {
            eo.rank = rank;
            eo.world_size = tp;
            eo.comm = &comm;
        }
        eo.max_tok = std::max({std::min(chunk, std::max(max_prefill, in)), max_b + mixed, 16});
        eo.max_seqs = std::max(max_b, 1) + (mixed > 0 ? 1 : 0);
        eo.max_out_rows = eo.max_seqs;
        eo.max_ctx = std::max(max_prefill, in + out) + 16;
        const int block = 16;
        // Each case gives its sequences just the blocks their contexts need, side by side.
        const int pre_stride = (max_prefill + block - 1) / block, dec_stride = (in + out + block - 1) / block;
        const int mix_stride = (mixed + block - 1) / block;
        eo.kv_blocks = std::max<int64_t>(pre_stride, static_cast<int64_t>(dec_stride) * max_b + mix_stride);
        eo.max_ctx = std::max(eo.max_ctx, mixed + 16);
        auto t0 = Clock::now();
        auto eng = engine::Engine::create(reg, c, eo);
        if (eng->kv_block_size() != block) throw Error("this tool assumes the attention block of 16");
        std::printf("model %s on %s: weights %.2f GB%s, plan %.1f s\n", model.c_str(), eng->placement().c_str(),
                    static_cast<double>(eng->weight_bytes()) / 1e9, tp > 1 ? (" per rank, " + std::to_string(tp) + " ranks").c_str() : "",
                    seconds(t0, Clock::now()));
        if (sample)
            std::printf("sample: temperature %g, top_k %d, top_p %g, min_p %g; drawn %s\n", static_cast<double>(sample->temperature),
                        sample->top_k, static_cast<double>(sample->top_p), static_cast<double>(sample->min_p),
                        eng->sample_on_card() ? "on the card" : "on the host");
        std::mt19937 rng(1234);
        std::uniform_int_distribution<int32_t> tok(10, static_cast<int32_t>(std::min<int64_t>(eng->vocab(), 30000) - 1));
        auto prompt = [&](int n) {
            std::vector<int32_t> p(static_cast<size_t>(n));
            for (auto& t : p) t = tok(rng);
            return p;
        };
        std::printf("%-10s %8s %10s %12s %12s\n", "case", "size", "seconds", "tokens/s", "ms/step");
        for (int n : prefills) {
            const int stride = (n + block - 1) / block;
            prefill(*eng, {prompt(n)}, chunk, stride, 0);  // warm: kernels, heuristics, caches
            auto a = Clock::now();
            const int reps = n <= 1024 ? 5 : 2;
            for (int r = 0; r < reps; ++r) prefill(*eng, {prompt(n)}, chunk, stride, 0);
            const double s = seconds(a, Clock::now()) / reps;
            std::printf("%-10s %8d %10.4f %12.1f %12.2f\n", "prefill", n, s, n / s, 1e3 * s / ((n + chunk - 1) / chunk));
        }
        for (int B : decodes) {
            std::vector<std::vector<int32_t>> ps;
            for (int s = 0; s < B; ++s) ps.push_back(prompt(in));
            const int stride = dec_stride;
            std::vector<int32_t> next = prefill(*eng, ps, chunk, stride, 0);
            std::vector<float> lg;
            engine::StepBatch b;
            b.block_table_stride = stride;
            b.n_seq_decode = B;
            for (int s = 0; s < B; ++s) {
                b.cu_seqlens.push_back(s);
                b.seq_ids.push_back(s);
                b.out_ids.push_back(s);
                for (int k = 0; k < stride; ++k) b.block_tables.push_back(s * stride + k);
            }
            b.cu_seqlens.push_back(B);
            std::vector<engine::CardDraw> draws(static_cast<size_t>(B));
            for (auto& d : draws) {  // greedy, or --sample's settings (each step brings its draws)
                d.on_card = !sample || eng->sample_on_card();
                if (!sample) continue;
                d.temperature = sample->temperature;
                d.top_k = sample->top_k;
                d.top_p = sample->top_p;
                d.min_p = sample->min_p;
            }
            std::vector<std::vector<int32_t>> history(static_cast<size_t>(B));
            std::vector<int32_t> toks;
            auto set_step = [&](int t) {  // step t's positions and draws (its tokens are `next`)
                b.tokens = next;
                b.positions.assign(static_cast<size_t>(B), in + t);
                const auto position = static_cast<uint64_t>(in + t);
                for (int s = 0; sample && s < B; ++s)
                    draws[static_cast<size_t>(s)].u = sampling::uniform_at(static_cast<uint64_t>(s) + 1, position);
            };
            // Pipelined: every row picked on the card, so step t + 1 is queued (fed on the card)
            // before step t's tokens are collected.
            const bool pipelined = !lockstep && eng->placement() != "host" && (!sample || eng->sample_on_card());
            auto take = [&](int s, int32_t pick) {
                next[static_cast<size_t>(s)] = pick;
                if (print_tokens) history[static_cast<size_t>(s)].push_back(pick);
            };
            auto piped = [&](int t) {  // collects step t, with step t + 1 queued first (up to `out`)
                if (t == 0) {
                    set_step(0);
                    eng->enqueue(b, draws, 0);
                }
                if (t + 1 < out) {
                    set_step(t + 1);
                    eng->enqueue(b, draws, B);
                }
                eng->collect(toks);
                for (int s = 0; s < B; ++s) take(s, toks[static_cast<size_t>(s)]);
            };
            auto step = [&](int t) {
                if (pipelined) return piped(t);
                set_step(t);
                eng->step(b, lg, draws, toks);
                const auto position = static_cast<uint64_t>(in + t);
                for (int s = 0; s < B; ++s) {
                    const auto i = static_cast<size_t>(s);
                    int32_t pick = 0;
                    if (!sample || (!toks.empty() && toks[i] >= 0))
                        pick = greedy_token(toks, lg, i, eng->vocab());
                    else {
                        sample->seed = static_cast<uint64_t>(s) + 1;
                        pick = sampling::sample(
                                   std::span<const float>(&lg[i * static_cast<size_t>(eng->vocab())], static_cast<size_t>(eng->vocab())),
                                   *sample, {}, position)
                                   .token;
                    }
                    take(s, pick);
                }
            };
            const int warm = std::min(3, out);
            for (int t = 0; t < warm; ++t) step(t);
            eng->reset_host_times();
            auto a = Clock::now();
            for (int t = warm; t < out; ++t) step(t);
            const double s = seconds(a, Clock::now());
            const int steps = out - warm;
            const engine::Engine::HostTimes ht = eng->host_times();
            if (print_tokens)
                for (int s = 0; s < B; ++s) {
                    std::printf("tokens %d:", s);
                    for (int32_t t : history[static_cast<size_t>(s)]) std::printf(" %d", t);
                    std::printf("\n");
                }
            std::printf("%-10s %8d %10.4f %12.1f %12.3f\n", "decode", B, s, steps * B / s, 1e3 * s / steps);
            if (ht.steps > 0) {  // the host's share of a step on a card; "outside": the loop's own work between steps
                const double n = static_cast<double>(ht.steps), step_us = 1e6 * s / steps;
                std::printf("host       %8d   us a step (%s): check %.1f, stage %.1f, queue %.1f, wait %.1f, outside the engine %.1f\n", B,
                            pipelined ? "pipelined" : "lockstep", ht.prepare_us / n, ht.stage_us / n, ht.queue_us / n, ht.wait_us / n,
                            step_us - (ht.prepare_us + ht.stage_us + ht.queue_us + ht.wait_us) / n);
            }
            if (mixed <= 0) continue;
            // The same decode rows (positions from `in` again: their cache is rewritten) plus a
            // P-token chunk of sequence B, whose blocks follow the decoders'.
            engine::StepBatch m;
            const int mstride = std::max(stride, mix_stride);
            m.block_table_stride = mstride;
            m.n_seq_decode = B;
            for (int q = 0; q <= B; ++q) {
                m.cu_seqlens.push_back(q);
                m.seq_ids.push_back(q);
                const int own = q < B ? stride : mix_stride, first = q < B ? q * stride : B * stride;
                for (int k = 0; k < mstride; ++k) m.block_tables.push_back(k < own ? first + k : 0);
                if (q < B) m.out_ids.push_back(q);
            }
            m.cu_seqlens.back() = B;
            m.cu_seqlens.push_back(B + mixed);
            m.out_ids.push_back(B + mixed - 1);
            const std::vector<int32_t> chunk_tokens = prompt(mixed);
            std::vector<engine::CardDraw> mdraws(static_cast<size_t>(B) + 1);
            for (auto& d : mdraws) d.on_card = true;
            auto mstep = [&](int t) {
                m.tokens = next;
                m.tokens.insert(m.tokens.end(), chunk_tokens.begin(), chunk_tokens.end());
                m.positions.assign(static_cast<size_t>(B), in + t);
                for (int i = 0; i < mixed; ++i) m.positions.push_back(i);
                eng->step(m, lg, mdraws, toks);
                for (int q = 0; q < B; ++q) next[static_cast<size_t>(q)] = greedy_token(toks, lg, static_cast<size_t>(q), eng->vocab());
            };
            for (int t = 0; t < warm; ++t) mstep(t);
            a = Clock::now();
            for (int t = warm; t < out; ++t) mstep(t);
            const double ms = seconds(a, Clock::now());
            std::printf("%-10s %8s %10.4f %12.1f %12.3f\n", "mixed", (std::to_string(B) + "+" + std::to_string(mixed)).c_str(), ms,
                        steps * B / ms, 1e3 * ms / steps);
        }
    } catch (const std::exception& e) {
        std::cerr << "rad-enginebench: " << (tp > 1 ? "rank " + std::to_string(rank) + ": " : "") << e.what() << "\n";
        std::fflush(stdout);
        if (tp > 1) _exit(1);  // a forked rank leaves without running the parent's destructors
        return 1;
    }
    std::fflush(stdout);
    if (tp > 1) _exit(0);
    return 0;
}
