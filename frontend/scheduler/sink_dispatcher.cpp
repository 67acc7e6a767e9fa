#include "sink_dispatcher.h"

#include "radiance/util/log.h"

namespace radiance::frontend {

SinkDispatcher::SinkDispatcher(size_t max_pending) : max_pending_(max_pending < 1 ? 1 : max_pending) {
    thread_ = std::thread([this] { run(); });
}

SinkDispatcher::~SinkDispatcher() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void SinkDispatcher::post(std::vector<SinkEvent>& batch) {
    if (batch.empty()) return;
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return queue_.size() < max_pending_ || stop_; });
    queue_.push_back(std::move(batch));
    batch.clear();
    lk.unlock();
    cv_.notify_all();
}

void SinkDispatcher::flush() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return queue_.empty() && !delivering_; });
}

void SinkDispatcher::run() {
    std::unique_lock lk(mu_);
    for (;;) {
        cv_.wait(lk, [&] { return !queue_.empty() || stop_; });
        if (queue_.empty()) return;  // stopping, and everything is delivered
        std::vector<SinkEvent> batch = std::move(queue_.front());
        queue_.pop_front();
        delivering_ = true;
        lk.unlock();
        cv_.notify_all();  // a post() waiting for room
        for (SinkEvent& e : batch) {
            // A sink that throws must not take the other requests' deliveries with it.
            try {
                if (e.finish)
                    e.sink->on_finish(e.why, e.error);
                else if (e.embedding)
                    e.sink->on_embedding(*e.embedding);
                else
                    e.sink->on_tokens(e.tokens);
            } catch (const std::exception& ex) {
                log::error("a generation sink failed: ", ex.what());
            }
        }
        batch.clear();  // sinks (and what they hold) go before the lock is taken again
        lk.lock();
        delivering_ = false;
        cv_.notify_all();  // flush()
    }
}

}  // namespace radiance::frontend
