// rad-collbench [--ranks N] [--reps N] [--slot-bytes B] [--device [--rows NAME,...]] [--radiance-home DIR] [--kernels LIST]
//
// Latency of the collectives between N processes of one host, over the same shared-memory
// communicator the worker group uses (ipc::HostComm), for messages of 4 KiB .. 64 MiB. Every rank
// checks the sums (the rank order of the reference), then rank 0 prints the median latency and
// the bus bandwidth (2 (N-1)/N bytes per byte reduced, as NCCL's tests report it).
//   (default)  the host-staging rows' code (rad_host_collectives.h, what libref and libcpu run)
//   --device   every all_reduce row of the kernel library that brings a card (libgpu: peer memory,
//              NCCL, host staging), rank r on card r, data on the card, each launch waited for;
//              its all_gather rows are checked once on uneven spans. --rows keeps the named rows.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <radiance/kernels/rad_host_collectives.h>

#include "radiance/core/registry.h"
#include "radiance/ipc/host_comm.h"
#include "radiance/util/args.h"
#include "radiance/util/strings.h"

using namespace radiance;

namespace {

int run_rank(const std::string& name, int rank, int world, int reps) {
    auto comm = ipc::HostComm::attach(name, rank);
    RadComm c{};
    c.struct_size = sizeof c;
    comm->fill(&c);
    const int64_t dim = 1024;  // 4 KiB rows
    int bad = 0;
    for (int64_t bytes : {int64_t{4} << 10, int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20, int64_t{64} << 20}) {
        const int64_t n = bytes / (dim * 4);
        std::vector<float> x(static_cast<size_t>(n * dim));
        RadTensor t{};
        t.data = x.data();
        t.dtype = RAD_F32;
        t.rank = 2;
        t.shape[0] = n;
        t.shape[1] = dim;
        RadParam p[2]{};
        p[0].name = "n";
        p[0].i = n;
        p[1].name = "dim";
        p[1].i = dim;
        RadArgs a{};
        a.t = &t;
        a.n_t = 1;
        a.p = p;
        a.n_p = 2;
        a.comm = &c;
        std::vector<double> us;
        for (int r = 0; r < reps + 2; ++r) {
            for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i % 97) * (rank + 1));
            const auto t0 = std::chrono::steady_clock::now();
            if (rad_host_all_reduce_f32(&a) != RAD_OK) return 2;
            const double d = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
            if (r >= 2) us.push_back(d);
        }
        const float factor = static_cast<float>(world * (world + 1) / 2);  // sum of (rank + 1)
        for (size_t i = 0; i < x.size(); i += 511)
            if (x[i] != static_cast<float>(i % 97) * factor) ++bad;
        std::sort(us.begin(), us.end());
        const double med = us[us.size() / 2];
        if (rank == 0)
            std::printf("| %9lld | %10.1f | %10.1f | %8.2f |\n", static_cast<long long>(bytes), med, us.back(),
                        static_cast<double>(bytes) * 2.0 * (world - 1) / world / (med * 1e3));
        std::fflush(stdout);  // the rank leaves through _exit, which flushes nothing
    }
    return bad ? 3 : 0;
}

struct DeviceOptions {
    bool on = false;
    std::string rows, home, kernels;
};

RadParam int_param(const char* name, int64_t v) {
    RadParam p{};
    p.name = name;
    p.type = RAD_P_INT;
    p.i = v;
    return p;
}

// One launch of a device row with its scratch (one buffer, grown to the largest need); the wait included.
struct DeviceRow {
    const core::KernelRow* row;
    const RadDeviceApi* dev;
    RadStream stream;
    RadComm* comm;
    void* scratch = nullptr;
    uint64_t scratch_bytes = 0;
    int launch(const RadOpSchema* schema, RadTensor* t, int nt, std::vector<RadParam> ps) {
        RadArgs a{};
        a.schema = schema;
        a.t = t;
        a.n_t = nt;
        a.p = ps.data();
        a.n_p = static_cast<int32_t>(ps.size());
        a.stream = stream;
        a.rank = comm->rank;
        a.world_size = comm->world;
        a.comm = comm;
        if (row->info->scratch) {
            const uint64_t need = row->info->scratch(&a);
            if (need > scratch_bytes) {
                if (scratch) dev->release(scratch);
                scratch = dev->alloc(need);
                scratch_bytes = scratch ? need : 0;
            }
            a.scratch = scratch;
            a.scratch_bytes = scratch_bytes;
        }
        int rc = row->info->launch(&a);
        if (rc == RAD_OK) rc = dev->sync(stream);
        return rc;
    }
    ~DeviceRow() {
        if (scratch) dev->release(scratch);
    }
};

int run_rank_device(const std::string& name, int rank, int world, int reps, const DeviceOptions& o) {
    auto comm = ipc::HostComm::attach(name, rank);
    RadComm c{};
    c.struct_size = sizeof c;
    comm->fill(&c);
    core::LoadOptions lo = core::load_options(o.home, o.kernels);
    lo.machine.device_ordinal = rank;
    const core::Registry reg = core::Registry::load(lo);
    const core::KernelLibrary* lib = reg.device_library();
    if (!lib) {
        if (rank == 0) std::fprintf(stderr, "rad-collbench: no kernel library brings a card on this machine\n");
        return 4;
    }
    const RadDeviceApi* dev = lib->device;
    RadStream stream = dev->stream_create();
    const std::vector<std::string> keep = o.rows.empty() ? std::vector<std::string>{} : str::split(o.rows, ",");
    int bad = 0;
    const int64_t dim = 1024;
    for (const core::KernelRow& r : lib->rows) {
        const std::string op = r.info->op;
        if ((op != "all_reduce" && op != "all_gather") || r.info->domain != RAD_DOMAIN_DEVICE) continue;
        if (!keep.empty() && std::find(keep.begin(), keep.end(), r.info->name) == keep.end()) continue;
        bool needs_peers = false, needs_cards = false;
        for (int k = 0; k < r.info->n_constraints; ++k) {
            const std::string key = r.info->constraints[k].key ? r.info->constraints[k].key : "";
            needs_peers = needs_peers || key == RAD_FACT_P2P;
            needs_cards = needs_cards || key == RAD_FACT_DISTINCT;
        }
        if (needs_peers && dev->peer_cards < world) {
            if (rank == 0) std::printf("\n%s: skipped (cards 0..%d do not all reach each other)\n", r.info->name, world - 1);
            continue;
        }
        if (needs_cards && dev->cards < world) {
            if (rank == 0) std::printf("\n%s: skipped (%d ranks, %d card(s): it needs a card per rank)\n", r.info->name, world, dev->cards);
            continue;
        }
        DeviceRow dr{&r, dev, stream, &c};
        const RadOpSchema* schema = reg.schema(op);
        if (op == "all_gather") {  // one check on uneven spans
            const int64_t n = 3, total = 1000 + world - 1;
            const int64_t lo_ = rank * total / world, w = (rank + 1) * total / world - lo_;
            std::vector<float> hx(static_cast<size_t>(n * w)), hy(static_cast<size_t>(n * total));
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < w; ++j) hx[i * w + j] = static_cast<float>(i * 10000 + lo_ + j);
            void* dx = dev->alloc(hx.size() * 4);
            void* dy = dev->alloc(hy.size() * 4);
            dev->copy(dx, hx.data(), hx.size() * 4, RAD_COPY_H2D, stream);
            RadTensor t[2]{};
            t[0].data = dx, t[0].dtype = RAD_F32, t[0].rank = 2, t[0].shape[0] = n, t[0].shape[1] = w;
            t[1].data = dy, t[1].dtype = RAD_F32, t[1].rank = 2, t[1].shape[0] = n, t[1].shape[1] = total;
            int rc = dr.launch(schema, t, 2, {int_param("n", n), int_param("total", total)});
            dev->copy(hy.data(), dy, hy.size() * 4, RAD_COPY_D2H, stream);
            dev->sync(stream);
            int wrong = 0;
            for (int64_t i = 0; i < n; ++i)
                for (int64_t j = 0; j < total; ++j)
                    if (hy[i * total + j] != static_cast<float>(i * 10000 + j)) ++wrong;
            if (rc != RAD_OK || wrong) ++bad;
            if (rank == 0)
                std::printf("\n%s: uneven spans (%lld columns over %d ranks) %s\n", r.info->name, static_cast<long long>(total), world,
                            rc != RAD_OK ? dev->last_error()
                            : wrong      ? "WRONG"
                                         : "ok");
            std::fflush(stdout);
            dev->release(dx);
            dev->release(dy);
            continue;
        }
        if (rank == 0) {
            std::printf("\n%s (%s)\n\n| bytes     | p50 us     | max us     | bus GB/s |\n|---|---|---|---|\n", r.info->name,
                        r.info->computes);
            std::fflush(stdout);
        }
        for (int64_t bytes : {int64_t{4} << 10, int64_t{64} << 10, int64_t{1} << 20, int64_t{16} << 20, int64_t{64} << 20}) {
            const int64_t n = bytes / (dim * 4);
            std::vector<float> x(static_cast<size_t>(n * dim));
            for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i % 97) * (rank + 1));
            void* dx = dev->alloc(x.size() * 4);
            RadTensor t{};
            t.data = dx, t.dtype = RAD_F32, t.rank = 2, t.shape[0] = n, t.shape[1] = dim;
            std::vector<double> us;
            int rc = RAD_OK;
            for (int rep = 0; rep < reps + 2 && rc == RAD_OK; ++rep) {
                dev->copy(dx, x.data(), x.size() * 4, RAD_COPY_H2D, stream);
                dev->sync(stream);
                c.barrier(&c);  // every rank starts the timed launch together
                const auto t0 = std::chrono::steady_clock::now();
                rc = dr.launch(schema, &t, 1, {int_param("n", n), int_param("dim", dim)});
                const double d = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                if (rep >= 2) us.push_back(d);
            }
            std::vector<float> y(x.size());
            dev->copy(y.data(), dx, y.size() * 4, RAD_COPY_D2H, stream);
            dev->sync(stream);
            dev->release(dx);
            const float factor = static_cast<float>(world * (world + 1) / 2);
            int wrong = 0;
            for (size_t i = 0; i < y.size(); i += 511)
                if (y[i] != static_cast<float>(i % 97) * factor) ++wrong;
            if (rc != RAD_OK || wrong) {
                ++bad;
                if (rank == 0)
                    std::printf("| %9lld | %s |\n", static_cast<long long>(bytes), rc != RAD_OK ? dev->last_error() : "WRONG SUMS");
                std::fflush(stdout);
                break;
            }
            std::sort(us.begin(), us.end());
            const double med = us[us.size() / 2];
            if (rank == 0)
                std::printf("| %9lld | %10.1f | %10.1f | %8.2f |\n", static_cast<long long>(bytes), med, us.back(),
                            static_cast<double>(bytes) * 2.0 * (world - 1) / world / (med * 1e3));
            std::fflush(stdout);
        }
    }
    dev->stream_destroy(stream);
    return bad ? 3 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    int world = 2, reps = 20;
    uint64_t slot = 4ull << 20;
    DeviceOptions dopt;
    try {
        util::Args args(argc, argv);
        while (args.next()) {
            if (args.is("--device"))
                dopt.on = true;
            else if (args.is("--ranks"))
                world = static_cast<int>(args.integer(2, 64));
            else if (args.is("--reps"))
                reps = static_cast<int>(args.integer(1, 1 << 20));
            else if (args.is("--slot-bytes"))
                slot = static_cast<uint64_t>(args.integer(4096, INT64_MAX));
            else if (args.is("--rows"))
                dopt.rows = args.value();
            else if (args.is("--radiance-home"))
                dopt.home = args.value();
            else if (args.is("--kernels"))
                dopt.kernels = args.value();
            else {
                std::fprintf(stderr,
                             "usage: rad-collbench [--ranks N] [--reps N] [--slot-bytes B] [--device [--rows NAME,...]] "
                             "[--radiance-home DIR] [--kernels LIST]\n");
                return 2;
            }
        }
    } catch (const util::ArgsError& e) {
        std::fprintf(stderr, "rad-collbench: %s\n", e.what());
        return 2;
    }
    if (world < 2 || reps < 1) {
        std::fprintf(stderr, "rad-collbench: --ranks must be at least 2 and --reps at least 1\n");
        return 2;
    }
    const std::string name = "/radiance-collbench-" + std::to_string(getpid());
    auto owner = ipc::HostComm::create(name, world, slot);
    if (dopt.on) {
        std::printf("device all_reduce rows, %d processes (rank r on card r), %llu-byte staging slots\n", world,
                    static_cast<unsigned long long>(slot));
    } else {
        std::printf("host-staging all_reduce, %d processes, %llu-byte slots\n\n", world, static_cast<unsigned long long>(slot));
        std::printf("| bytes     | p50 us     | max us     | bus GB/s |\n|---|---|---|---|\n");
    }
    std::fflush(stdout);
    std::vector<pid_t> kids;
    for (int r = 0; r < world; ++r) {
        pid_t pid = fork();
        if (pid == 0) {
            int rc = 1;
            try {
                rc = dopt.on ? run_rank_device(name, r, world, reps, dopt) : run_rank(name, r, world, reps);
            } catch (const std::exception& e) {
                std::fprintf(stderr, "rad-collbench: rank %d: %s\n", r, e.what());
            }
            std::fflush(stdout);
            _exit(rc);
        }
        kids.push_back(pid);
    }
    int failed = 0;
    for (pid_t k : kids) {
        int st = 0;
        waitpid(k, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failed;
    }
    if (failed) std::fprintf(stderr, "rad-collbench: %d rank(s) failed or saw wrong sums\n", failed);
    return failed ? 1 : 0;
}
