// SinkDispatcher: the scheduler's events reach sinks in the order posted, off the posting thread,
// with a bounded queue, and a throwing sink does not stop the others' deliveries.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "sink_dispatcher.h"

using namespace radiance::frontend;

namespace {

struct Log : GenerationSink {
    std::mutex mu;
    std::vector<int32_t> seen;  // token ids, -1 for the finish
    std::thread::id thread;
    bool throws = false;
    std::atomic<int> slow_ms{0};
    void on_tokens(const std::vector<TokenEvent>& t) override {
        std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms.load()));
        std::lock_guard lk(mu);
        thread = std::this_thread::get_id();
        for (auto& e : t) seen.push_back(e.token);
        if (throws) throw std::runtime_error("sink failed");
    }
    void on_finish(FinishReason, const std::string&) override {
        std::lock_guard lk(mu);
        seen.push_back(-1);
    }
};

SinkEvent tokens(std::shared_ptr<GenerationSink> s, int32_t t) {
    SinkEvent e;
    e.sink = std::move(s);
    e.tokens.push_back({t, 0.0f, {}});
    return e;
}

SinkEvent finish(std::shared_ptr<GenerationSink> s) {
    SinkEvent e;
    e.sink = std::move(s);
    e.finish = true;
    return e;
}

}  // namespace

TEST_CASE("sink dispatcher delivers in post order on its own thread", "[scheduler][dispatcher]") {
    auto a = std::make_shared<Log>(), b = std::make_shared<Log>();
    SinkDispatcher d(2);
    for (int32_t step = 0; step < 50; ++step) {
        std::vector<SinkEvent> batch;
        batch.push_back(tokens(a, step));
        batch.push_back(tokens(b, 1000 + step));
        if (step == 49) batch.push_back(finish(a));
        d.post(batch);
        REQUIRE(batch.empty());
    }
    d.flush();
    REQUIRE(a->seen.size() == 51);
    for (int32_t i = 0; i < 50; ++i) REQUIRE(a->seen[i] == i);
    REQUIRE(a->seen.back() == -1);
    REQUIRE(b->seen.size() == 50);
    REQUIRE(b->seen.front() == 1000);
    REQUIRE(a->thread != std::this_thread::get_id());
}

TEST_CASE("sink dispatcher bounds what waits and survives a throwing sink", "[scheduler][dispatcher]") {
    auto slow = std::make_shared<Log>(), bad = std::make_shared<Log>();
    slow->slow_ms = 20;
    bad->throws = true;
    const auto t0 = std::chrono::steady_clock::now();
    {
        SinkDispatcher d(1);
        for (int32_t step = 0; step < 5; ++step) {
            std::vector<SinkEvent> batch;
            batch.push_back(tokens(bad, step));
            batch.push_back(tokens(slow, step));
            d.post(batch);
        }
        // With one batch waiting at most, the fifth post waited for three deliveries (60 ms).
        REQUIRE(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(55));
    }  // the destructor delivers the rest
    REQUIRE(slow->seen == std::vector<int32_t>{0, 1, 2, 3, 4});
    REQUIRE(bad->seen == std::vector<int32_t>{0, 1, 2, 3, 4});
}
