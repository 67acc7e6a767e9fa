// fake_ranks.h: a StepTarget that runs steps without workers, for the scheduler's unit tests.
//
// Its "model" keeps a real KV cache: each step writes its tokens into the blocks the block
// tables name, and an out row's next token is a hash of the whole context read back through its
// block table. So a request's tokens equal next_tokens() of its prompt only if the scheduler's
// block accounting, chunking, preemption and recompute are right: a block shared by two live
// sequences, a stale block after a preemption or a position off by one changes the hash.
//
// Steps are sent and received as WorkerGroup's are, up to two outstanding, and run when received,
// in order. A fed row (StepMessage::fed_from) takes the token the step before picked for the out
// row it names, as a worker's card would, and a fed step that does not follow, by id, a step
// that ran is refused as a worker refuses it. Every row is "picked alike" (feeds_* set).
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

#include "step_target.h"

namespace scheduler_test {

using radiance::frontend::PlanInfo;

class FakeRanks : public radiance::frontend::StepTarget {
public:
    FakeRanks(PlanInfo plan, uint64_t capacity = 1 << 20) : plan_(plan), capacity_(capacity) {
        plan_.feeds_greedy = plan_.feeds_sampled = true;
        if (plan_.hidden_width == 0) plan_.hidden_width = 4;  // hidden_width's default below
    }

    // The token that follows `context` (also what a row whose context is this gets).
    static int32_t next_token(const std::vector<int32_t>& context, int64_t vocab) {
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < context.size(); ++i) h = (h ^ (static_cast<uint64_t>(context[i]) + i * 7919)) * 1099511628211ull;
        return static_cast<int32_t>(h % static_cast<uint64_t>(vocab));
    }
    // A sampled row's token: its context's hash with the request's seed and its draw number, so
    // a draw counted wrong (or a wrong seed) changes it as a real sampler's would.
    static int32_t drawn_token(std::vector<int32_t> context, uint64_t seed, int64_t draw, int64_t vocab) {
        context.push_back(static_cast<int32_t>(seed % 1000003));
        context.push_back(static_cast<int32_t>(draw));
        return next_token(context, vocab);
    }
    // What greedy decoding of `prompt` gives for n tokens (with a seed: what sampling draws).
    static std::vector<int32_t> reference(std::vector<int32_t> context, int n, int64_t vocab, std::optional<uint64_t> seed = {}) {
        std::vector<int32_t> out;
        for (int i = 0; i < n; ++i) {
            out.push_back(seed ? drawn_token(context, *seed, i, vocab) : next_token(context, vocab));
            context.push_back(out.back());
        }
        return out;
    }

    bool ready() const override { return ready_; }
    PlanInfo plan() const override { return plan_; }
    uint64_t step_capacity() const override { return capacity_; }
    int64_t crashes() const override { return crashes_; }
    uint64_t joins() const override { return joins_; }
    void send(radiance::ipc::StepMessage m) override;
    radiance::ipc::ResultMessage receive() override;
    // A restarted rank's cache: every block empty.
    void forget_kv() {
        std::lock_guard<std::mutex> lk(mu_);
        kv_.clear();
    }
    // A plan whose ranks feed nothing: every step waits for the one before (lockstep).
    void feed_nothing() { plan_.feeds_greedy = plan_.feeds_sampled = false; }

    // Called with each step before it runs, its fed tokens filled in; may throw (a lost rank, a
    // failure) and bump crashes.
    std::function<void(const radiance::ipc::StepMessage&)> before_step;
    std::atomic<bool> ready_{true};
    std::atomic<int64_t> crashes_{0};
    std::atomic<uint64_t> joins_{1};  // a test restarting a rank bumps it (and clears the KV: forget_kv)
    std::atomic<int64_t> steps{0};
    std::atomic<int64_t> max_rows{0};  // the most sequences one step held
    // Embeddings: a hidden row (StepBatch::hidden_ids) is `hidden_width` values, value j the
    // next_token() of the row's context (read back through its block table) followed by j, so a
    // pooled vector is right only if the KV behind every pooled row is.
    int32_t hidden_width = 4;
    static std::vector<float> hidden_of(std::vector<int32_t> context, int32_t width, int64_t vocab) {
        std::vector<float> v;
        context.push_back(0);
        for (int32_t j = 0; j < width; ++j) {
            context.back() = -1000 - j;
            v.push_back(static_cast<float>(next_token(context, vocab)));
        }
        return v;
    }
    std::atomic<int64_t> overlapped{0};  // steps sent while another was outstanding
    std::atomic<int64_t> fed_rows{0};    // rows fed from the step before
    // Steps outstanding behind the one being run (before_step may read it: a loss with two in flight).
    std::atomic<int> behind{0};

private:
    radiance::ipc::ResultMessage run(const radiance::ipc::StepMessage& m);

    PlanInfo plan_;
    uint64_t capacity_;
    std::mutex mu_;
    std::map<int64_t, int32_t> kv_;  // block * block_size + offset -> token
    std::deque<radiance::ipc::StepMessage> outstanding_;
    uint64_t step_seq_ = 0;
    uint64_t last_ran_ = 0;            // the id of the last step that ran (0: none, or it failed)
    std::vector<int32_t> last_picks_;  // its tokens, per out row
};

}  // namespace scheduler_test
