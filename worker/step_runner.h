// step_runner.h: a worker's steps, in the order they came, answered in that order.
//
// A step whose every out row is picked on the card is queued there (Engine::enqueue) and
// answered once collected, so the front end's next step, sent while this one runs, is staged
// while the card works (the overlapped scheduler): the worker takes a step, looks for the next one
// without blocking, and collects the oldest before answering. A front end that waits for every
// answer before sending the next step sees lockstep behaviour. Any other step (rows whose logits
// come back, a host plan) runs synchronously once every queued step is answered.
//
// Fed rows (StepMessage::fed_from) take the tokens picked for the step before: on a card from its
// picked ids there, so every rank stages the message's own card draws (not a stand-in) and picks
// what rank 0 picks; on a one-rank host plan from the tokens this worker sampled. A fed step is
// refused unless this worker ran the step just before it (by id) and that step did not fail.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "radiance/engine/engine.h"
#include "radiance/ipc/host_comm.h"
#include "radiance/ipc/step_codec.h"
#include "row_pool.h"

namespace radiance::worker {

// The group's communicator as steps name it: a step naming a new generation makes this rank
// attach to it first (after a peer restarted, the whole group meets in a fresh one).
struct CommState {
    RadComm comm{};
    std::unique_ptr<ipc::HostComm> host;
    uint64_t generation = 0;
    int rank = 0;
    void follow(const ipc::StepMessage& m);
};

class StepRunner {
public:
    // `sample_here`: this rank samples and answers with tokens (rank 0).
    StepRunner(engine::Engine& eng, CommState& comm, bool sample_here, RowPool& rows);

    // Takes one encoded step and appends the encoded results that are now due, in step order.
    void take(const std::string& bytes, std::vector<std::string>& out);
    // Collects the oldest step queued on the card and appends its encoded result.
    void collect_oldest(std::vector<std::string>& out);
    // Steps queued on the card, not answered yet.
    bool busy() const { return !queued_.empty(); }

private:
    struct Queued {
        uint64_t step_id;
        size_t samples;  // out rows whose tokens the answer carries (0 on a rank that does not sample)
    };
    void collect_all(std::vector<std::string>& out);
    std::string run_now(ipc::StepMessage& m, const std::vector<engine::CardDraw>& draws);
    std::string refuse(uint64_t step_id, const std::string& why);

    engine::Engine& eng_;
    CommState& comm_;
    const bool sample_here_;
    RowPool& rows_;
    const bool on_card_;
    std::deque<Queued> queued_;
    std::vector<float> logits_;
    // The last step this worker took, whether it went well, and (a host plan) the tokens it sampled.
    uint64_t last_id_ = 0;
    bool last_ok_ = false;
    std::vector<int32_t> last_tokens_;
};

// Which out rows this rank picks as every rank does (Loaded.feeds_*): greedy and plainly sampled
// rows on a card that picks them; any plain row on a one-rank host plan (its own sampler's).
bool feeds_greedy(const engine::Engine& eng, int world);
bool feeds_sampled(const engine::Engine& eng, int world);

}  // namespace radiance::worker
