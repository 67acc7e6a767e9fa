// rad-collbench [--ranks N] [--reps N] [--slot-bytes B]
//
// Latency of the host-staging collectives (rad_host_collectives.h: the rows libref, libcpu and
// libgpu's staged all_reduce use) between N processes of one host, over the same shared-memory
// communicator the worker group uses (ipc::HostComm), for messages of 4 KiB .. 64 MiB. Every rank
// checks the sums (the rank order of the reference), then rank 0 prints the median latency and
// the bus bandwidth (2 (N-1)/N bytes per byte reduced, as NCCL's tests report it).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <radiance/kernels/rad_host_collectives.h>

#include "radiance/ipc/host_comm.h"

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

}  // namespace

int main(int argc, char** argv) {
    int world = 2, reps = 20;
    uint64_t slot = 4ull << 20;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--ranks") world = std::stoi(argv[i + 1]);
        else if (a == "--reps") reps = std::stoi(argv[i + 1]);
        else if (a == "--slot-bytes") slot = std::stoull(argv[i + 1]);
        else {
            std::fprintf(stderr, "usage: rad-collbench [--ranks N] [--reps N] [--slot-bytes B]\n");
            return 2;
        }
    }
    if (world < 2 || reps < 1) {
        std::fprintf(stderr, "rad-collbench: --ranks must be at least 2 and --reps at least 1\n");
        return 2;
    }
    const std::string name = "/radiance-collbench-" + std::to_string(getpid());
    auto owner = ipc::HostComm::create(name, world, slot);
    std::printf("host-staging all_reduce, %d processes, %llu-byte slots\n\n", world, static_cast<unsigned long long>(slot));
    std::printf("| bytes     | p50 us     | max us     | bus GB/s |\n|---|---|---|---|\n");
    std::fflush(stdout);
    std::vector<pid_t> kids;
    for (int r = 0; r < world; ++r) {
        pid_t pid = fork();
        if (pid == 0) _exit(run_rank(name, r, world, reps));
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
