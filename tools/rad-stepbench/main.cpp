// rad-stepbench [--model DIR_OR_RAD] [--steps N] [--ranks 1,2] [--transports shm,grpc]
//
// Step round-trip overhead: front end -> every rank -> result back, with libnoop (ops that do
// nothing) so only the engine, the transport and the processes are measured. One decode row per
// step, greedy sampling on rank 0. Prints p50, p99 and mean per (transport, ranks).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "radiance/convert/convert.h"
#include "radiance/util/args.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"
#include "radiance/util/strings.h"
#include "worker_group.h"

using namespace radiance;
namespace fs = std::filesystem;

int main(int argc, char** argv) {
    std::string model = RAD_DEFAULT_MODEL;
    int steps = 5000;
    std::string ranks_arg = "1", transports_arg = "shm,grpc";
    try {
        util::Args args(argc, argv);
        while (args.next()) {
            if (args.is("--model"))
                model = args.value();
            else if (args.is("--steps"))
                steps = static_cast<int>(args.integer(1, 1 << 30));
            else if (args.is("--ranks"))
                ranks_arg = args.value();
            else if (args.is("--transports"))
                transports_arg = args.value();
            else {
                std::cerr << "usage: rad-stepbench [--model DIR|FILE.rad] [--steps N] [--ranks 1,2] [--transports shm,grpc]\n";
                return 2;
            }
        }
    } catch (const util::ArgsError& e) {
        std::cerr << "rad-stepbench: " << e.what() << "\n";
        return 2;
    }
    log::set_level(log::Level::warn);
    std::string rad = model, tmp;
    try {
        if (fs::is_directory(model)) {
            tmp = (fs::temp_directory_path() / ("rad_stepbench_" + std::to_string(getpid()) + ".rad")).string();
            core::LoadOptions lo;
            lo.homes = {RAD_BUILD_HOME_DIR};
            core::Registry reg = core::Registry::load(lo);
            convert::ConvertOptions o;
            o.src = model;
            o.out = tmp;
            std::ostringstream sink;
            convert::convert(reg, o, sink);
            rad = tmp;
        }
        std::printf("%-9s %5s %8s %10s %10s %10s\n", "transport", "ranks", "steps", "p50_us", "p99_us", "mean_us");
        for (auto& tr : str::split(transports_arg, ","))
            for (auto& rk : str::split(ranks_arg, ",")) {
                frontend::GroupOptions go;
                go.world_size = std::stoi(rk);
                go.model_path = rad;
                go.kernels = "libnoop";
                go.radiance_home = std::string(NOOP_HOME) + ":" + RAD_BUILD_HOME_DIR;
                go.force_grpc = tr == "grpc";
                go.max_tok = 16;
                go.max_seqs = 1;
                go.max_ctx = 64;
                go.max_out_rows = 1;
                frontend::WorkerGroup g(go);
                g.start();
                if (!g.wait_ready(std::chrono::seconds(60))) throw Error("workers not ready: " + g.failure());
                ipc::StepMessage m;
                m.batch.tokens = {1};
                m.batch.positions = {0};
                m.batch.cu_seqlens = {0, 1};
                m.batch.seq_ids = {0};
                m.batch.out_ids = {0};
                m.batch.block_tables = {0};
                m.batch.block_table_stride = 1;
                m.batch.n_seq_decode = 1;
                m.samples.resize(1);
                std::vector<double> us;
                for (int s = 0; s < steps + 200; ++s) {
                    auto t0 = std::chrono::steady_clock::now();
                    g.step(m);
                    auto t1 = std::chrono::steady_clock::now();
                    if (s >= 200) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());  // after warm-up
                }
                std::sort(us.begin(), us.end());
                double mean = 0;
                for (double x : us) mean += x;
                mean /= static_cast<double>(us.size());
                std::printf("%-9s %5s %8zu %10.1f %10.1f %10.1f\n", tr.c_str(), rk.c_str(), us.size(), us[us.size() / 2],
                            us[us.size() * 99 / 100], mean);
                g.shutdown();
            }
    } catch (const std::exception& e) {
        std::cerr << "rad-stepbench: " << e.what() << "\n";
        if (!tmp.empty()) fs::remove(tmp);
        return 1;
    }
    if (!tmp.empty()) fs::remove(tmp);
    return 0;
}
