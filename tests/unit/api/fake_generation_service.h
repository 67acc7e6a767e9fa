// fake_generation_service.h: a deterministic GenerationService for the API tests. Every request
// "generates" a scripted token sequence on a thread of its own making, a few tokens per call,
// honouring max_tokens, stop_token_ids, deadlines and cancel(); logprobs are made up but fixed.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "generation.h"

namespace api_test {

using namespace radiance::frontend;

class FakeGenerationService : public GenerationService {
public:
    enum class Refusal { None, QueueFull, NotReady, BadRequest };

    struct Settings {
        std::vector<int32_t> script;        // generated in order, then the first stop token id (EOS)
        size_t tokens_per_call = 2;         // per on_tokens() call
        std::chrono::microseconds tick{0};  // between calls
        Refusal refusal = Refusal::None;
        int fail_after = -1;                            // finish with Error after this many tokens (-1: never)
        ModelInfo info{"fake-model", 4096, 151936, 8};  // 8-wide embeddings
    };

    FakeGenerationService() : FakeGenerationService(Settings()) {}
    explicit FakeGenerationService(Settings s);
    ~FakeGenerationService() override;

    uint64_t submit(GenerationRequest req, std::shared_ptr<GenerationSink> sink) override;
    void cancel(uint64_t id, radiance::frontend::FinishReason why = radiance::frontend::FinishReason::Cancelled) override;
    bool ready() const override { return settings().refusal != Refusal::NotReady; }
    ModelInfo model_info() const override { return settings().info; }
    nlohmann::json stats_json() const override { return {{"kv_blocks_used", 3}, {"kv_blocks_total", 100}}; }

    // The vector an embedding request gets (GenerationRequest::embed): a fixed function of its
    // prompt, `width` values, not normalised.
    static std::vector<float> fake_embedding(const std::vector<int32_t>& prompt, int64_t width);

    void set(Settings s);
    Settings settings() const;
    std::vector<GenerationRequest> submitted() const;
    std::vector<uint64_t> cancelled() const;
    std::vector<radiance::frontend::FinishReason> cancel_reasons() const;  // in cancelled()'s order
    size_t active() const;
    // Blocks until no request is active (true) or the timeout passes (false).
    bool wait_idle(std::chrono::milliseconds timeout) const;

private:
    struct Active {
        uint64_t id;
        GenerationRequest req;
        std::shared_ptr<GenerationSink> sink;
        size_t produced = 0;
        bool cancel = false;
        FinishReason cancel_why = FinishReason::Cancelled;
    };
    void loop();

    mutable std::mutex mu_;
    mutable std::condition_variable cv_;
    Settings settings_;
    std::map<uint64_t, Active> active_;
    std::vector<GenerationRequest> submitted_;
    std::vector<uint64_t> cancelled_;
    std::vector<radiance::frontend::FinishReason> cancel_reasons_;
    uint64_t next_id_ = 1;
    bool stop_ = false;
    bool delivering_ = false;  // sinks are being called outside the lock
    std::thread thread_;
};

}  // namespace api_test
