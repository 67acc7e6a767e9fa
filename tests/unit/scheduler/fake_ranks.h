// fake_ranks.h: a StepTarget that runs steps without workers, for the scheduler's unit tests.
//
// Its "model" keeps a real KV cache: each step writes its tokens into the blocks the block
// tables name, and an out row's next token is a hash of the whole context read back through its
// block table. So a request's tokens equal next_tokens() of its prompt only if the scheduler's
// block accounting, chunking, preemption and recompute are right: a block shared by two live
// sequences, a stale block after a preemption or a position off by one changes the hash.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "step_target.h"

namespace scheduler_test {

using radiance::frontend::PlanInfo;

class FakeRanks : public radiance::frontend::StepTarget {
public:
    FakeRanks(PlanInfo plan, uint64_t capacity = 1 << 20) : plan_(plan), capacity_(capacity) {}

    // The token that follows `context` (also what a row whose context is this gets).
    static int32_t next_token(const std::vector<int32_t>& context, int64_t vocab) {
        uint64_t h = 1469598103934665603ull;
        for (size_t i = 0; i < context.size(); ++i) h = (h ^ (static_cast<uint64_t>(context[i]) + i * 7919)) * 1099511628211ull;
        return static_cast<int32_t>(h % static_cast<uint64_t>(vocab));
    }
    // What greedy decoding of `prompt` gives for n tokens.
    static std::vector<int32_t> reference(std::vector<int32_t> context, int n, int64_t vocab) {
        std::vector<int32_t> out;
        for (int i = 0; i < n; ++i) {
            out.push_back(next_token(context, vocab));
            context.push_back(out.back());
        }
        return out;
    }

    bool ready() const override { return ready_; }
    PlanInfo plan() const override { return plan_; }
    uint64_t step_capacity() const override { return capacity_; }
    int64_t crashes() const override { return crashes_; }
    uint64_t joins() const override { return joins_; }
    radiance::ipc::ResultMessage step(const radiance::ipc::StepMessage& m) override;
    // A restarted rank's cache: every block empty.
    void forget_kv() {
        std::lock_guard<std::mutex> lk(mu_);
        kv_.clear();
    }

    // Called with each step before it runs; may throw (a lost rank, a failure) and bump crashes.
    std::function<void(const radiance::ipc::StepMessage&)> before_step;
    std::atomic<bool> ready_{true};
    std::atomic<int64_t> crashes_{0};
    std::atomic<uint64_t> joins_{1};  // a test restarting a rank bumps it (and clears the KV: forget_kv)
    std::atomic<int64_t> steps{0};
    std::atomic<int64_t> max_rows{0};  // the most sequences one step held

private:
    PlanInfo plan_;
    uint64_t capacity_;
    std::mutex mu_;
    std::map<int64_t, int32_t> kv_;  // block * block_size + offset -> token
};

}  // namespace scheduler_test
