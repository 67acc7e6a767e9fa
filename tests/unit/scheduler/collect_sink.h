// collect_sink.h: what the scheduler tests need of a request: a sink that keeps its tokens and
// its end, and a greedy request.
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "generation.h"

namespace scheduler_test {

using radiance::frontend::FinishReason;
using radiance::frontend::GenerationRequest;
using radiance::frontend::GenerationSink;
using radiance::frontend::TokenEvent;

struct Collect : GenerationSink {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<int32_t> tokens;
    bool done = false;
    FinishReason why = FinishReason::Error;
    std::string error;
    void on_tokens(const std::vector<TokenEvent>& t) override {
        std::lock_guard lk(mu);
        for (const auto& e : t) tokens.push_back(e.token);
        cv.notify_all();
    }
    void on_finish(FinishReason r, const std::string& e) override {
        std::lock_guard lk(mu);
        done = true;
        why = r;
        error = e;
        cv.notify_all();
    }
    bool wait_done(std::chrono::seconds s = std::chrono::seconds(20)) {
        std::unique_lock lk(mu);
        return cv.wait_for(lk, s, [&] { return done; });
    }
    bool wait_tokens(size_t n) {
        std::unique_lock lk(mu);
        return cv.wait_for(lk, std::chrono::seconds(20), [&] { return tokens.size() >= n || done; });
    }
};

inline GenerationRequest greedy(std::vector<int32_t> prompt, int max_tokens) {
    GenerationRequest r;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0;
    return r;
}

}  // namespace scheduler_test
