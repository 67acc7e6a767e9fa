// step_target.h: what the scheduler needs of the ranks, and nothing else: whether they serve,
// what their plan holds, how large a step may be, and running steps, up to two at a time.
// WorkerGroup is the real one (worker processes over gRPC and shared memory); tests give the
// scheduler a fake.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

#include "radiance/ipc/step_codec.h"

namespace radiance::frontend {

// What every rank's engine holds for the scheduler to plan against.
struct PlanInfo {
    int kv_block_size = 0;
    int64_t kv_blocks = 0;
    int64_t vocab = 0;
    int64_t max_out_rows = 0;
    // Which out rows every rank picks alike (on a card, or a one-rank host plan's sampler), so a
    // step sent before their tokens are back may feed them (ipc::StepMessage::fed_from): greedy
    // rows, and rows sampled with temperature / top_k / top_p / min_p and a seed. Rows with
    // penalties, bias or logprobs never are.
    bool feeds_greedy = false;
    bool feeds_sampled = false;
    // Embeddings: the width of a hidden row every rank can return (0: some rank's architecture
    // declares no pooled output, or its plan is on a card).
    int64_t hidden_width = 0;
};

// A rank went away during a step or before it; the message names rank, pid and cause.
struct RankLost : std::runtime_error {
    int rank;
    RankLost(int r, const std::string& what) : std::runtime_error(what), rank(r) {}
};

// A step larger than the transport carries (step_capacity()): the step's requests are at fault,
// not a rank, which never saw it.
struct StepTooLarge : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class StepTarget {
public:
    virtual ~StepTarget() = default;
    // Every rank serves (steps may be run).
    virtual bool ready() const = 0;
    virtual PlanInfo plan() const = 0;
    // The most bytes one encoded step may take.
    virtual uint64_t step_capacity() const = 0;
    // Sends a step to every rank without waiting for it; at most two are outstanding (a step sent
    // while the one before runs: the overlapped scheduler). Throws RankLost when a rank is not
    // there to take it, StepTooLarge past step_capacity() (sent to no rank). Taken by value: the
    // caller moves a step it is done with (no copy of a large step).
    virtual void send(ipc::StepMessage m) = 0;
    // Waits for the oldest outstanding step; rank 0's result. Throws RankLost when a rank goes (every
    // outstanding step is lost with it), radiance::Error when a rank reports a failure of this
    // step (later steps stay outstanding). Steps are answered in the order they were sent.
    virtual ipc::ResultMessage receive() = 0;
    // One step in lockstep: send, then receive.
    ipc::ResultMessage step(const ipc::StepMessage& m) {
        send(m);
        return receive();
    }
    // Workers that crashed (not killed from outside) so far: the scheduler tells a step that
    // crashed a worker from one that lost a rank for another reason.
    virtual int64_t crashes() const = 0;
    // Workers that have joined so far (a rank's restart is one more). A worker joins with an empty
    // KV cache, so while this stays the same every block the front end accounted for is still
    // there; once it moves, none may be.
    virtual uint64_t joins() const = 0;
};

}  // namespace radiance::frontend
