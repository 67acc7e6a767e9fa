#include "fake_generation_service.h"

#include <algorithm>

namespace api_test {

FakeGenerationService::FakeGenerationService(Settings s) : settings_(std::move(s)), thread_([this] { loop(); }) {}

FakeGenerationService::~FakeGenerationService() {
    {
        std::lock_guard lk(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

uint64_t FakeGenerationService::submit(GenerationRequest req, std::shared_ptr<GenerationSink> sink) {
    std::lock_guard lk(mu_);
    switch (settings_.refusal) {
    case Refusal::QueueFull: throw QueueFull("queue is full (fake)");
    case Refusal::NotReady: throw NotReady("warming up (fake)");
    case Refusal::BadRequest: throw BadRequest("the fake refuses this", "prompt");
    case Refusal::None: break;
    }
    const uint64_t id = next_id_++;
    submitted_.push_back(req);
    active_.emplace(id, Active{id, std::move(req), std::move(sink)});
    cv_.notify_all();
    return id;
}

void FakeGenerationService::cancel(uint64_t id, FinishReason why) {
    std::lock_guard lk(mu_);
    cancelled_.push_back(id);
    cancel_reasons_.push_back(why);
    auto it = active_.find(id);
    if (it != active_.end()) {
        it->second.cancel = true;
        it->second.cancel_why = why;
    }
    cv_.notify_all();
}

void FakeGenerationService::set(Settings s) {
    std::lock_guard lk(mu_);
    settings_ = std::move(s);
}

FakeGenerationService::Settings FakeGenerationService::settings() const {
    std::lock_guard lk(mu_);
    return settings_;
}

std::vector<GenerationRequest> FakeGenerationService::submitted() const {
    std::lock_guard lk(mu_);
    return submitted_;
}

std::vector<FinishReason> FakeGenerationService::cancel_reasons() const {
    std::lock_guard<std::mutex> lk(mu_);
    return cancel_reasons_;
}

std::vector<uint64_t> FakeGenerationService::cancelled() const {
    std::lock_guard lk(mu_);
    return cancelled_;
}

size_t FakeGenerationService::active() const {
    std::lock_guard lk(mu_);
    return active_.size();
}

bool FakeGenerationService::wait_idle(std::chrono::milliseconds timeout) const {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, timeout, [&] { return active_.empty() && !delivering_; });
}

std::vector<float> FakeGenerationService::fake_embedding(const std::vector<int32_t>& prompt, int64_t width) {
    std::vector<float> v(static_cast<size_t>(std::max<int64_t>(width, 0)));
    for (size_t j = 0; j < v.size(); ++j) {
        int64_t h = static_cast<int64_t>(j) + 1;
        for (int32_t t : prompt) h = (h * 31 + t) % 1009;
        v[j] = static_cast<float>(h - 504) / 100.0f;  // not unit-norm: the API layer normalises
    }
    return v;
}

void FakeGenerationService::loop() {
    struct Call {
        std::shared_ptr<GenerationSink> sink;
        std::vector<TokenEvent> tokens;
        bool finish = false;
        FinishReason why = FinishReason::Length;
        std::string error;
        std::vector<float> embedding;  // an embedding request's pooled vector
    };
    std::unique_lock lk(mu_);
    while (!stop_) {
        if (active_.empty()) {
            cv_.wait(lk, [&] { return stop_ || !active_.empty(); });
            continue;
        }
        std::vector<Call> calls;
        const auto now = std::chrono::steady_clock::now();
        for (auto it = active_.begin(); it != active_.end();) {
            Active& a = it->second;
            Call c{a.sink};
            if (a.cancel || now > a.req.deadline) {
                c.finish = true;
                c.why = a.cancel ? a.cancel_why : FinishReason::Error;
                if (!a.cancel) c.error = "the request's deadline passed";
            }
            if (!c.finish && a.req.embed) {  // an embedding request answers at once
                c.embedding = FakeGenerationService::fake_embedding(a.req.prompt, settings_.info.hidden_size);
                c.finish = true, c.why = FinishReason::Stop;
            }
            for (size_t k = 0; !c.finish && k < settings_.tokens_per_call; ++k) {
                const auto& script = settings_.script;
                const auto& stops = a.req.stop_token_ids;
                const bool past_script = a.produced >= script.size();
                if (past_script && !stops.empty()) {
                    c.tokens.push_back({stops.front(), -0.01f, {}});  // the model says EOS
                } else {
                    const int32_t t = script.empty() ? 0 : script[a.produced % script.size()];
                    TokenEvent ev{t, -0.25f * static_cast<float>(a.produced % 4), {}};
                    for (int j = 0; j < a.req.sampling.top_logprobs; ++j) ev.top.push_back({t + j, ev.logprob - static_cast<float>(j)});
                    c.tokens.push_back(ev);
                }
                ++a.produced;
                const int32_t last = c.tokens.back().token;
                if (std::find(stops.begin(), stops.end(), last) != stops.end()) {
                    c.finish = true, c.why = FinishReason::Stop;
                } else if (static_cast<int>(a.produced) >= a.req.max_tokens) {
                    c.finish = true, c.why = FinishReason::Length;
                } else if (settings_.fail_after >= 0 && static_cast<int>(a.produced) >= settings_.fail_after) {
                    c.finish = true, c.why = FinishReason::Error, c.error = "a rank was lost (fake)";
                }
            }
            calls.push_back(std::move(c));
            it = calls.back().finish ? active_.erase(it) : std::next(it);
        }
        const auto tick = settings_.tick;
        // Sinks are called without the lock, as the real scheduler does: they may call cancel().
        delivering_ = true;
        lk.unlock();
        for (auto& c : calls) {
            if (!c.tokens.empty()) c.sink->on_tokens(c.tokens);
            if (!c.embedding.empty()) c.sink->on_embedding(c.embedding);
            if (c.finish) c.sink->on_finish(c.why, c.error);
        }
        calls.clear();
        lk.lock();
        delivering_ = false;
        cv_.notify_all();
        if (tick.count() > 0) {
            lk.unlock();
            std::this_thread::sleep_for(tick);
            lk.lock();
        }
    }
    // Whatever is left finishes as cancelled, so no sink waits forever.
    for (auto& [id, a] : active_) {
        auto sink = a.sink;
        lk.unlock();
        sink->on_finish(FinishReason::Cancelled, "");
        lk.lock();
    }
    active_.clear();
}

}  // namespace api_test
