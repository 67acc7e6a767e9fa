// Real worker processes behind a WorkerGroup: they join, load, step (shared memory and gRPC), and
// a worker killed with SIGKILL is detected within a second with its rank, pid and signal named.
#include <catch2/catch.hpp>

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>

#include "converted_llama.h"
#include "radiance/convert/safetensors.h"
#include "worker_group.h"

using namespace radiance;
using namespace std::chrono;
using Catch::Matchers::Contains;

namespace {

frontend::GroupOptions options(bool grpc) {
    frontend::GroupOptions go;
    go.world_size = 1;
    go.model_path = testing::converted_llama();
    go.worker_binary = WORKER_BIN;
    go.radiance_home = RAD_BUILD_HOME_DIR;
    go.accept_reference = true;
    go.force_grpc = grpc;
    go.max_tok = 64;
    go.max_seqs = 4;
    go.max_ctx = 128;
    go.max_out_rows = 4;
    return go;
}

ipc::StepMessage prompt_step(const std::vector<int32_t>& ids) {
    ipc::StepMessage m;
    m.batch.tokens = ids;
    for (size_t i = 0; i < ids.size(); ++i) m.batch.positions.push_back(static_cast<int32_t>(i));
    m.batch.cu_seqlens = {0, static_cast<int32_t>(ids.size())};
    m.batch.seq_ids = {0};
    m.batch.out_ids = {static_cast<int32_t>(ids.size() - 1)};
    m.batch.block_tables = {0, 1, 2, 3};
    m.batch.block_table_stride = 4;
    m.samples.resize(1);  // greedy
    return m;
}

// This process's children named radiance-worker that are still there (running or not yet reaped).
int worker_children() {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        std::ifstream f(e.path() / "stat");
        std::string stat;
        if (!f || !std::getline(f, stat)) continue;
        const auto open = stat.find('('), close = stat.rfind(')');
        if (open == std::string::npos || close == std::string::npos || close + 4 >= stat.size()) continue;
        const std::string comm = stat.substr(open + 1, close - open - 1);
        const int ppid = std::atoi(stat.c_str() + close + 4);  // ") S ppid ..."
        if (ppid == getpid() && comm.rfind("radiance-worker", 0) == 0) ++n;
    }
    return n;
}

// The pid the Ready event reported, once the callback has stored it under mu (it may run just
// after wait_ready returns); 0 if it never does. A pid of 0 given to kill() would signal this
// whole process group.
int ready_pid(std::mutex& mu, const int& pid) {
    for (int i = 0; i < 500; ++i) {
        {
            std::lock_guard<std::mutex> lk(mu);
            if (pid > 0) return pid;
        }
        std::this_thread::sleep_for(milliseconds(10));
    }
    return 0;
}

}  // namespace

TEST_CASE("workers join, plan and step over shared memory and over gRPC", "[workers]") {
    // The shared llama fixture's prompts and the first token of transformers' greedy run on each
    // (golden.safetensors: promptN.ids, promptN.greedy[0]). Each prompt is stepped alone over
    // either transport, and both must pick the reference's token. (A temporary mutation adding
    // 1 to the tokens the group decodes from gRPC results made this fail on every prompt, shm
    // still passing; the old check, 0 <= token < 512, passed it.)
    auto golden = convert::SafetensorsFile::open(std::string(SHARED_LLAMA) + "/golden.safetensors");
    auto ints = [&](const std::string& name) {
        const auto it = golden->tensors().find(name);
        REQUIRE(it != golden->tensors().end());
        REQUIRE(it->second.dtype == RAD_I32);
        std::vector<int32_t> v(it->second.bytes / 4);
        std::memcpy(v.data(), it->second.data, it->second.bytes);
        return v;
    };
    std::vector<std::vector<int32_t>> prompts;
    std::vector<int32_t> want;
    for (int i = 0; golden->tensors().count("prompt" + std::to_string(i) + ".ids"); ++i) {
        prompts.push_back(ints("prompt" + std::to_string(i) + ".ids"));
        want.push_back(ints("prompt" + std::to_string(i) + ".greedy").at(0));
    }
    REQUIRE(prompts.size() == 3);
    for (bool grpc : {false, true}) {
        INFO((grpc ? "gRPC" : "shared memory"));
        frontend::WorkerGroup g(options(grpc));
        g.start();
        REQUIRE(g.wait_ready(seconds(60)));
        CHECK(g.plan().vocab == 512);
        CHECK(g.plan().kv_block_size == 16);
        for (size_t i = 0; i < prompts.size(); ++i) {
            INFO("prompt" << i);
            REQUIRE(prompts[i].size() <= 64);  // the four blocks of 16 prompt_step gives it
            ipc::ResultMessage r = g.step(prompt_step(prompts[i]));
            REQUIRE(r.tokens.size() == 1);
            CHECK(r.tokens[0].token == want[i]);
        }
        g.shutdown();
    }
}

TEST_CASE("a worker killed with SIGKILL is detected within a second, named by rank, pid and signal", "[workers]") {
    // The state the event callback writes is declared before the group, so it outlives the
    // group's shutdown, which still reports events.
    std::mutex mu;
    std::vector<frontend::RankEvent> events;
    steady_clock::time_point down_at;
    frontend::WorkerGroup g(options(false));
    g.on_rank_event([&](const frontend::RankEvent& e) {
        std::lock_guard<std::mutex> lk(mu);
        events.push_back(e);
        if (e.state == frontend::RankState::Down && down_at == steady_clock::time_point{}) down_at = steady_clock::now();
    });
    g.start();
    REQUIRE(g.wait_ready(seconds(60)));
    int pid = 0;
    {
        std::lock_guard<std::mutex> lk(mu);
        for (auto& e : events)
            if (e.state == frontend::RankState::Ready) pid = e.pid;
    }
    REQUIRE(pid > 0);
    const auto killed_at = steady_clock::now();
    REQUIRE(kill(pid, SIGKILL) == 0);
    for (int i = 0; i < 100 && !g.states().empty() && g.states()[0] != frontend::RankState::Down; ++i)
        std::this_thread::sleep_for(milliseconds(10));
    REQUIRE(g.states()[0] == frontend::RankState::Down);
    std::lock_guard<std::mutex> lk(mu);
    CHECK(duration_cast<milliseconds>(down_at - killed_at).count() < 1000);
    // A step now fails fast with the rank named, never hangs.
    CHECK_THROWS_WITH(g.step(prompt_step({1, 2, 3})), Contains("rank 0"));
}

TEST_CASE("a stopped (hung) worker is detected by its missing heartbeat", "[workers]") {
    auto go = options(false);
    go.heartbeat_timeout = milliseconds(500);
    int pid = 0;  // declared before the group: its shutdown still reports events
    std::string cause;
    std::mutex mu;
    frontend::WorkerGroup g(go);
    g.on_rank_event([&](const frontend::RankEvent& e) {
        std::lock_guard<std::mutex> lk(mu);
        if (e.state == frontend::RankState::Ready) pid = e.pid;
        if (e.state == frontend::RankState::Down && cause.empty()) cause = e.detail;
    });
    g.start();
    REQUIRE(g.wait_ready(seconds(60)));
    const int stopped = ready_pid(mu, pid);
    REQUIRE(stopped > 0);
    REQUIRE(kill(stopped, SIGSTOP) == 0);
    for (int i = 0; i < 200 && g.states()[0] != frontend::RankState::Down; ++i) std::this_thread::sleep_for(milliseconds(10));
    REQUIRE(g.states()[0] == frontend::RankState::Down);
    std::lock_guard<std::mutex> lk(mu);
    CHECK_THAT(cause, Contains("no heartbeat"));
}

TEST_CASE("a worker that cannot serve says why and the group reports it", "[workers]") {
    auto go = options(false);
    go.kernels = "libref";  // only the reference library, which may not serve: the plan must be refused
    go.accept_reference = false;
    frontend::WorkerGroup g(go);
    g.start();
    CHECK_FALSE(g.wait_ready(seconds(60)));
    CHECK_THAT(g.failure(), Contains("rank 0") && Contains("--debug-accept-reference-kernels"));
}

TEST_CASE("a group stopped while it restarts a rank ends cleanly and leaves no worker behind", "[workers]") {
    // The reaper of a killed worker restarts its rank at once, so the group stops 0, 1, 2, ... ms
    // after the kill: around the reaper's wake-up, its restart and the new worker's join. Every
    // worker must be gone once shutdown returns. (A shutdown that began inside the restart's
    // fork once left the new worker's reaper unjoined, std::terminate in CI; that window is too
    // narrow for these rounds to hit it reliably: they did not on the old code here.)
    for (int round = 0; round < 8; ++round) {
        std::mutex mu;
        int pid = 0;
        frontend::WorkerGroup g(options(false));
        g.on_rank_event([&](const frontend::RankEvent& e) {
            std::lock_guard<std::mutex> lk(mu);
            if (e.state == frontend::RankState::Ready && pid == 0) pid = e.pid;
        });
        g.start();
        REQUIRE(g.wait_ready(seconds(60)));
        const int ready = ready_pid(mu, pid);
        REQUIRE(ready > 0);
        REQUIRE(kill(ready, SIGKILL) == 0);
        std::this_thread::sleep_for(microseconds(1000 * round));
        g.shutdown();
        CHECK(worker_children() == 0);
    }
}

// Every step a rank is given is answered, also one the group gave up on when another rank was
// lost: a surviving rank's answers to such steps pile up in its ring unless they are read, and a
// full ring ends the worker ("cannot return a step result"). Rank 0 is killed right after each of
// six steps, before anyone reads an answer; rank 1 must live through all six and then answer a
// step that it and the restarted rank 0 serve. (Mutation seen failing, 2026-12-07: send() not
// reading the stale answers: rank 1 exited with code 5 at the fifth kill, 4 ring slots.)
TEST_CASE("a surviving rank's answers to steps given up on never fill its ring", "[workers]") {
    auto go = options(false);
    go.world_size = 2;
    frontend::WorkerGroup g(go);
    g.start();
    REQUIRE(g.wait_ready(seconds(120)));
    const std::vector<int32_t> prompt{1, 5, 9, 13};
    const int32_t want = g.step(prompt_step(prompt)).tokens.at(0).token;
    // A loaded machine may let both ranks answer before the kill lands; such a round reads its
    // answer normally and does not count (it once failed CI's "CHECK_THROWS" that way).
    int kills = 0, given_up = 0;
    while (given_up < 6 && kills < 30) {
        INFO("kill " << kills + 1);
        g.send(prompt_step(prompt));
        g.restart_rank(0);
        ++kills;
        try {
            (void)g.receive();
        } catch (const frontend::RankLost&) {
            ++given_up;
        }
        REQUIRE(g.wait_ready(seconds(120)));
    }
    CHECK(given_up == 6);
    CHECK(g.restarts() == std::vector<int>{kills, 0});
    const ipc::ResultMessage r = g.step(prompt_step(prompt));
    REQUIRE(r.tokens.size() == 1);
    CHECK(r.tokens[0].token == want);
    g.shutdown();
}
