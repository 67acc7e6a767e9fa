// metrics.h: the Prometheus metrics of a radiance front end, named like vLLM's where the meaning
// is the same, under the `radiance:` prefix. prometheus-cpp (core) keeps the values; our own HTTP
// server serves the text format at /metrics.
#pragma once
#include <memory>
#include <string>

#include "scheduler.h"
#include "worker_group.h"

namespace radiance::frontend {

class Metrics final : public SchedulerObserver {
public:
    explicit Metrics(const std::string& model_name, int world_size);
    ~Metrics() override;

    // SchedulerObserver
    void on_step(double seconds, int tokens, int sequences) override;
    void on_first_token(double queue_seconds, double ttft_seconds) override;
    void on_token_gap(double seconds) override;
    void on_finish(FinishReason why, double e2e_seconds, int64_t prompt_tokens, int64_t generated) override;
    void on_preemption() override;
    void on_step_failure(bool rank_lost) override;
    void on_prefix_cache(int64_t queried, int64_t hits) override;

    // Rank events from the worker group.
    void on_rank(const RankEvent& e);
    // An HTTP answer, by status code.
    void on_http(const std::string& endpoint, int status);

    // The text exposition, with gauges refreshed from the scheduler and the group.
    std::string render(const Scheduler* sched, const WorkerGroup* group);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace radiance::frontend
