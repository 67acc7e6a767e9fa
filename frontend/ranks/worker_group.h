// worker_group.h: the front end's view of its ranks.
//
// Runs the control-plane gRPC server the workers join, spawns and supervises them (spawn mode,
// `radiance serve --tp N`) or waits for them to join by themselves (external mode), creates each
// local rank's shared-memory step ring, and runs a step on every rank. It notices a rank that
// exits, is killed, hangs (no heartbeat) or loses its connection within a second and says which
// rank, which pid, and the exit code or signal.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "radiance/ipc/step_codec.h"
#include "step_target.h"

namespace radiance::frontend {

struct GroupOptions {
    int world_size = 1;
    std::string model_path;                // the container every rank loads
    std::string listen;                    // "unix:/path" or "host:port"; "" = a private unix socket
    bool spawn = true;                     // false: external workers join by themselves
    std::string worker_binary;             // spawn mode: the radiance-worker to run ("" = beside this executable)
    std::vector<std::string> worker_args;  // extra arguments for spawned workers
    bool force_grpc = false;               // steps over gRPC even on one host
    int64_t vocab = 0;                     // sizes result slots when logits travel back, and step slots' masks
    // engine configuration every rank gets
    int max_tok = 256, max_seqs = 16, max_ctx = 2048, max_out_rows = 16;
    int64_t kv_blocks = 0;
    double memory_utilization = 0.9;  // a card's share the plan may take (KV sizing when kv_blocks is 0)
    // The KV cache's dtype as parse_kv_cache_dtype names it ("": f32 on the host, bf16 on a card).
    // The scheduler counts blocks as the workers report them, whatever a block's bytes.
    std::string kv_cache_dtype;
    // --deterministic: every rank's kernel libraries sum a row the same way whatever rides with it
    // (EngineOptions::deterministic; a card placement refuses it at startup).
    bool deterministic = false;
    std::string kernels, radiance_home;
    bool accept_reference = false;
    bool return_logits = false;
    // Embeddings: the width of a hidden row; result slots then hold max_tok of them (a mean-pooled
    // prompt returns every row it computes). 0: no step carries hidden rows.
    int64_t hidden_width = 0;
    std::string placement = "auto";  // auto | host | device (EngineOptions::placement)
    bool graphs = true;
    bool respawn = true;                 // spawn mode: restart a rank that dies
    uint64_t comm_slot_bytes = 4 << 20;  // host-staging slot per rank (collectives chunk larger messages)
    std::chrono::milliseconds heartbeat_timeout{1000};
    std::chrono::milliseconds step_timeout{60000};
    uint64_t max_step_bytes = 0;  // a smaller bound on a step than the shared-memory slot (0: the slot; tests)
};

enum class RankState { Absent, Joined, Loading, Ready, Failed, Down };
const char* rank_state_name(RankState s);

struct RankEvent {
    int rank;
    RankState state;
    int pid;
    std::string detail;  // the cause, as logged
};

class WorkerGroup : public StepTarget {
public:
    explicit WorkerGroup(GroupOptions opts);
    ~WorkerGroup();
    WorkerGroup(const WorkerGroup&) = delete;
    WorkerGroup& operator=(const WorkerGroup&) = delete;

    // Starts the control server (and the workers in spawn mode). Throws radiance::Error.
    void start();
    // Waits until every rank has loaded the model; false on timeout or when a rank failed to load
    // (failure() then says why).
    bool wait_ready(std::chrono::milliseconds timeout);
    bool ready() const override;
    std::string failure() const;
    PlanInfo plan() const override;
    std::string address() const;

    // Steps on every rank, up to two outstanding (StepTarget). Called from one thread. Step ids
    // are the group's, consecutive as sent, so a worker can tell that a step fed from the one
    // before (StepMessage::fed_from) follows the step it ran last.
    void send(ipc::StepMessage m) override;
    ipc::ResultMessage receive() override;
    size_t outstanding() const;
    // The most bytes one encoded step may take: a shared-memory request slot, sized from the
    // group's max_tok, max_seqs, max_ctx and max_out_rows (gRPC carries more; this is the bound for
    // both, so a step fits whichever transport a rank uses).
    uint64_t step_capacity() const override;

    // Restarts of each rank so far.
    std::vector<int> restarts() const;
    // Spawned workers that ended themselves badly (a fault signal, abort, non-zero exit) or hung,
    // as opposed to being killed from outside (SIGKILL, SIGTERM). External workers are not counted.
    int64_t crashes() const override;
    uint64_t joins() const override;
    // Called (from supervisor threads) on every rank state change.
    void on_rank_event(std::function<void(const RankEvent&)> cb);
    std::vector<RankState> states() const;

    // Restarts one rank on purpose (spawn mode) or drops its session (external mode).
    void restart_rank(int rank);
    // Asks every worker to exit and waits for spawned ones.
    void shutdown();

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace radiance::frontend
