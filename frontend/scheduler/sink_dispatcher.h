// sink_dispatcher.h: delivers the scheduler's token and finish events on a thread of their own.
//
// What a sink does with a token (detokenise, match stop strings, render an SSE chunk, queue it
// for the socket) costs ~10 us; at 256 sequences that is milliseconds per step, and done on the
// scheduler's thread it sat between one step's end and the next step's start while the card
// idled. Handed over here, it overlaps the next step instead. Events are delivered in the order
// they were posted (a request's tokens before its finish), by one thread.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "generation.h"

namespace radiance::frontend {

struct SinkEvent {
    std::shared_ptr<GenerationSink> sink;
    bool finish = false;  // on_finish(why, error), else on_embedding(*embedding) where set, else on_tokens(tokens)
    std::vector<TokenEvent> tokens;
    std::optional<std::vector<float>> embedding;
    FinishReason why = FinishReason::Length;
    std::string error;
};

class SinkDispatcher {
public:
    // At most `max_pending` posted batches wait undelivered; post() blocks past that, so a sink
    // slower than the steps slows the steps instead of growing the queue without bound.
    explicit SinkDispatcher(size_t max_pending = 2);
    ~SinkDispatcher();  // delivers what is queued, then stops
    SinkDispatcher(const SinkDispatcher&) = delete;
    SinkDispatcher& operator=(const SinkDispatcher&) = delete;

    // Queues one step's events (taken; `batch` is left empty). No-op for an empty batch.
    void post(std::vector<SinkEvent>& batch);
    // Waits until everything posted so far has been delivered.
    void flush();

private:
    void run();

    const size_t max_pending_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::vector<SinkEvent>> queue_;
    bool delivering_ = false;
    bool stop_ = false;
    std::thread thread_;
};

}  // namespace radiance::frontend
