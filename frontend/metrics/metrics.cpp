#include "metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <map>
#include <mutex>
#include <sstream>

namespace radiance::frontend {

using prometheus::Counter;
using prometheus::Gauge;
using prometheus::Histogram;

struct Metrics::Impl {
    std::mutex mu;
    std::shared_ptr<prometheus::Registry> reg = std::make_shared<prometheus::Registry>();
    std::map<std::string, std::string> base;
    Gauge* running;
    Gauge* waiting;
    Gauge* kv_usage;
    Counter* prompt_tokens;
    Counter* generation_tokens;
    Counter* preemptions;
    Counter* prefix_queries;
    Counter* prefix_hits;
    prometheus::Family<Counter>* step_failures;
    prometheus::Family<Counter>* success;
    prometheus::Family<Counter>* http;
    prometheus::Family<Gauge>* rank_up;
    prometheus::Family<Counter>* rank_restarts;
    Histogram* ttft;
    Histogram* itl;
    Histogram* e2e;
    Histogram* queue;
    Histogram* step;
    int world;
};

namespace {
Histogram::BucketBoundaries latency_buckets() {
    return {0.001, 0.0025, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0};
}
}  // namespace

Metrics::Metrics(const std::string& model_name, int world_size) : impl_(std::make_unique<Impl>()) {
    Impl& m = *impl_;
    m.world = world_size;
    m.base = {{"model_name", model_name}};
    auto& r = *m.reg;
    m.running =
        &prometheus::BuildGauge().Name("radiance:num_requests_running").Help("Requests in the running batch.").Register(r).Add(m.base);
    m.waiting =
        &prometheus::BuildGauge().Name("radiance:num_requests_waiting").Help("Requests waiting to be scheduled.").Register(r).Add(m.base);
    m.kv_usage = &prometheus::BuildGauge().Name("radiance:kv_cache_usage_perc").Help("KV cache usage, 1 = full.").Register(r).Add(m.base);
    m.prompt_tokens =
        &prometheus::BuildCounter().Name("radiance:prompt_tokens_total").Help("Prompt tokens processed.").Register(r).Add(m.base);
    m.generation_tokens =
        &prometheus::BuildCounter().Name("radiance:generation_tokens_total").Help("Tokens generated.").Register(r).Add(m.base);
    m.preemptions =
        &prometheus::BuildCounter().Name("radiance:num_preemptions_total").Help("Preemptions by recompute.").Register(r).Add(m.base);
    m.prefix_queries = &prometheus::BuildCounter()
                            .Name("radiance:prefix_cache_queries_total")
                            .Help("Prompt tokens looked up in the prefix cache (once a request).")
                            .Register(r)
                            .Add(m.base);
    m.prefix_hits = &prometheus::BuildCounter()
                         .Name("radiance:prefix_cache_hits_total")
                         .Help("Prompt tokens whose KV the prefix cache held.")
                         .Register(r)
                         .Add(m.base);
    m.step_failures = &prometheus::BuildCounter()
                           .Name("radiance:step_failures_total")
                           .Help("Steps that failed, by cause: a rank lost during the step, or an error on a healthy group.")
                           .Register(r);
    for (const char* cause : {"rank_lost", "error"}) m.step_failures->Add({{"model_name", model_name}, {"cause", cause}});
    m.success = &prometheus::BuildCounter().Name("radiance:request_success_total").Help("Finished requests by finish reason.").Register(r);
    m.http = &prometheus::BuildCounter()
                  .Name("radiance:http_requests_total")
                  .Help("HTTP answers by endpoint (a route's path, or other) and status code.")
                  .Register(r);
    m.rank_up = &prometheus::BuildGauge().Name("radiance:rank_up").Help("1 while the rank serves.").Register(r);
    m.rank_restarts =
        &prometheus::BuildCounter().Name("radiance:rank_restarts_total").Help("Times the rank went down and came back.").Register(r);
    auto hist = [&](const char* name, const char* help) {
        return &prometheus::BuildHistogram().Name(name).Help(help).Register(r).Add(m.base, latency_buckets());
    };
    m.ttft = hist("radiance:time_to_first_token_seconds", "Time from arrival to the first token.");
    m.itl = hist("radiance:inter_token_latency_seconds", "Time between consecutive tokens of a request.");
    m.e2e = hist("radiance:e2e_request_latency_seconds", "Time from arrival to the last token.");
    m.queue = hist("radiance:request_queue_time_seconds", "Time from arrival to the first step that ran it.");
    m.step = hist("radiance:step_duration_seconds", "Wall time of one step on every rank.");
    for (int i = 0; i < world_size; ++i) {
        m.rank_up->Add({{"rank", std::to_string(i)}}).Set(0);
        m.rank_restarts->Add({{"rank", std::to_string(i)}});
    }
    for (const char* reason : {"stop", "length", "abort", "error"})
        m.success->Add({{"model_name", model_name}, {"finished_reason", reason}});
}

Metrics::~Metrics() = default;

void Metrics::on_step(double seconds, int, int) { impl_->step->Observe(seconds); }
void Metrics::on_first_token(double queue_seconds, double ttft_seconds) {
    impl_->queue->Observe(queue_seconds);
    impl_->ttft->Observe(ttft_seconds);
}
void Metrics::on_token_gap(double seconds) { impl_->itl->Observe(seconds); }
void Metrics::on_preemption() { impl_->preemptions->Increment(); }
void Metrics::on_prefix_cache(int64_t queried, int64_t hits) {
    impl_->prefix_queries->Increment(static_cast<double>(queried));
    impl_->prefix_hits->Increment(static_cast<double>(hits));
}
void Metrics::on_step_failure(bool rank_lost) {
    auto labels = impl_->base;
    labels["cause"] = rank_lost ? "rank_lost" : "error";
    impl_->step_failures->Add(labels).Increment();
}

void Metrics::on_finish(FinishReason why, double e2e_seconds, int64_t prompt_tokens, int64_t generated) {
    Impl& m = *impl_;
    const char* reason = why == FinishReason::Stop                                        ? "stop"
                         : why == FinishReason::Length                                    ? "length"
                         : why == FinishReason::Cancelled || why == FinishReason::Aborted ? "abort"
                                                                                          : "error";
    auto labels = m.base;
    labels["finished_reason"] = reason;
    m.success->Add(labels).Increment();
    m.e2e->Observe(e2e_seconds);
    m.prompt_tokens->Increment(static_cast<double>(prompt_tokens));
    m.generation_tokens->Increment(static_cast<double>(generated));
}

void Metrics::on_rank(const RankEvent& e) {
    Impl& m = *impl_;
    std::lock_guard<std::mutex> lk(m.mu);
    const std::string r = std::to_string(e.rank);
    m.rank_up->Add({{"rank", r}}).Set(e.state == RankState::Ready ? 1 : 0);
    if (e.state == RankState::Down) m.rank_restarts->Add({{"rank", r}}).Increment();
}

void Metrics::on_http(const std::string& endpoint, int status) {
    impl_->http->Add({{"endpoint", endpoint}, {"code", std::to_string(status)}}).Increment();
}

std::string Metrics::render(const Scheduler* sched, const WorkerGroup* group) {
    Impl& m = *impl_;
    if (sched) {
        SchedulerStats s = sched->stats();
        m.running->Set(static_cast<double>(s.running));
        m.waiting->Set(static_cast<double>(s.waiting));
        m.kv_usage->Set(s.kv_blocks_total ? static_cast<double>(s.kv_blocks_used) / static_cast<double>(s.kv_blocks_total) : 0.0);
    }
    (void)group;
    std::ostringstream os;
    prometheus::TextSerializer().Serialize(os, m.reg->Collect());
    return os.str();
}

}  // namespace radiance::frontend
