// engine.h: one rank's model, planned and ready to step.
//
// create() runs the whole plan before any weight is touched: the architecture declares against the
// container's metadata, every op is resolved against the kernel hierarchy (an op no row serves is a
// startup error naming it), the activation arena is sized once from buffer liveness, and the KV
// cache is sized from the attention kernel's block. Weights are then used in place from the
// container's mapping where their stored form is what the kernels read.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "radiance/container/container.h"
#include "radiance/core/registry.h"
#include "radiance/engine/declaration.h"
#include "radiance/step/step_batch.h"

namespace radiance::engine {

struct EngineOptions {
    int rank = 0;
    int world_size = 1;
    int max_tok = 256;     // tokens in one step
    int max_seqs = 16;     // sequences in one step
    int max_ctx = 2048;    // longest context
    int max_out_rows = 0;  // logits rows per step (0: the plugin's rule)
    // Cache blocks per layer. 0: max_seqs sequences of max_ctx, or fewer when memory holds fewer
    // (on a card, what memory_utilization of it leaves once weights and buffers are placed;
    // on the host, half of the memory available).
    int64_t kv_blocks = 0;
    // The bytes the KV cache may take when kv_blocks is 0 (0: the rule above). Scales included,
    // so an fp8 cache holds ~1.94x the blocks of a bf16 one in the same budget.
    uint64_t kv_memory_bytes = 0;
    double memory_utilization = 0.9;  // the share of the card's memory the plan may take
    core::SelectOptions select;
    // Where the plan runs: "auto" puts it on the card of the first kernel library that brings one
    // (rad_kernel_device) and on the host otherwise; "host" and "device" insist.
    std::string placement = "auto";
    bool graphs = true;       // on a card: replay decode steps as graphs after their first run
    // RadDType of the KV cache (0: f32 on the host, bf16 on a card; RAD_FP8_E4M3: codes and a scale
    // a token and kv head, docs/OPS.md `attention`). parse_kv_cache_dtype reads the flag's words.
    int kv_dtype = 0;
    // --deterministic: a row's logits bitwise the same whatever else rides in its step, however its
    // prefix was chunked, at any thread count and after a restart (docs/OPS.md general rules).
    // Host placements only until libgpu honours it: a card placement is a startup error.
    bool deterministic = false;
    RadComm* comm = nullptr;  // the rank group's communicator for collective rows (owned by the caller)
    // The GPTQ calibration tap (radiance/engine/gram_files.h): each projection's input X^T X summed
    // into this folder's files for `calib_tokens` tokens (0: RADIANCE_CALIB_TOKENS, else 65536).
    // Empty: RADIANCE_CALIB_DIR, else off. Host plans of one rank only; the plan refuses the
    // fusions that hide a projection's input (rms_norm_gemm, rms_norm_gemm_swiglu).
    std::string calib_dir;
    int64_t calib_tokens = 0;
};

// The RadDType of a cache dtype as parse_kv_cache_dtype (radiance/util/kv_cache_dtype.h) names it:
// 0 for "" (the placement's default), else f32, bf16 or fp8_e4m3; anything else throws, naming it.
int kv_dtype_of(const std::string& name);

// One step's batch: the step contract's (radiance/step/step_batch.h).
using StepBatch = step::StepBatch;

// How one out row's token may be picked where its logits are (docs/OPS.md `argmax`, `sample`):
// the host sampler's settings without bias, penalties or logprobs, and its uniform draw.
struct CardDraw {
    bool on_card = false;
    float temperature = 0.0f;  // <= 0: greedy
    float top_p = 1.0f;
    float min_p = 0.0f;
    int32_t top_k = 0;
    double u = 0.0;  // sampling::uniform_at(seed, position)
    // Structured output's allowed tokens, (vocab() + 31) / 32 words (bit t % 32 of word t / 32), or
    // null: any token. Rows with one are picked on the card only where mask_on_card() says so.
    const uint32_t* allowed = nullptr;
};

class Engine {
public:
    // The engine keeps the registry (and so every plugin it planned with) loaded for its lifetime.
    static std::unique_ptr<Engine> create(std::shared_ptr<const core::Registry> reg, std::shared_ptr<const container::Reader> model,
                                          const EngineOptions& opts);
    ~Engine();

    int kv_block_size() const;
    int64_t kv_blocks() const;
    int64_t vocab() const;
    int64_t max_out_rows() const;
    // Embeddings (rad_declare_pooled): the width of a hidden row (0: the architecture declares no
    // pooled output, and a step with hidden_ids is refused), how many one step may ask for, and
    // the last step()'s rows, f32 [hidden_ids.size(), hidden_width()] in hidden_ids' order.
    int64_t hidden_width() const;
    int64_t max_hidden_rows() const;
    const std::vector<float>& hidden_rows() const;
    const Declaration& declaration() const;
    uint64_t arena_bytes() const;
    uint64_t kv_bytes() const;
    // "host", or the card's runtime and name ("cuda NVIDIA H200").
    std::string placement() const;
    uint64_t weight_bytes() const;
    // The --debug-selection text: every op, its bands, winners and losers.
    std::string selection_report() const;

    // Runs one step; `logits` receives out_ids.size() rows of vocab() floats.
    // Throws radiance::Error naming the op that failed.
    void step(const StepBatch& batch, std::vector<float>& logits);
    // As above, and out rows with draws[i].on_card pick their token where the logits are: on a
    // card the token comes back in tokens[i] and that row's logits do not (they are left
    // unspecified). Greedy rows use the `argmax` op, others the `sample` op where the card's library
    // has it (sample_on_card() says). tokens[i] is -1 for a row whose logits came back instead (not
    // on_card, or sampled without a `sample` row), and tokens stays empty when no row was picked
    // (a host plan: every row's logits came back and the caller picks).
    // `fed_from` as for enqueue(): the step's first token rows take tokens the card picked for the
    // step before (on a card only; a host plan's caller puts the tokens in itself).
    void step(const StepBatch& batch, std::vector<float>& logits, const std::vector<CardDraw>& draws, std::vector<int32_t>& tokens,
              std::span<const int32_t> fed_from = {});
    // Pipelined steps on a card: enqueue stages a step and queues its work without waiting, so the
    // card runs it right after the step before it while the host takes that one's tokens; collect
    // waits for the oldest queued step and returns its picked tokens (one per out row). Every out
    // row must be picked on the card (draws as for step(), each on_card and servable there). Token
    // row i < fed_from.size() takes the token the card picked for the previous step's out row
    // fed_from[i] (its value in batch.tokens is a placeholder): decode continues without the host
    // seeing the token first, and rows of the previous step may drop out or change places. The
    // `fed` form feeds the first `fed` rows from the previous step's first `fed` out rows. At most
    // two steps are queued; step() refuses while any is.
    void enqueue(const StepBatch& batch, const std::vector<CardDraw>& draws, std::span<const int32_t> fed_from);
    void enqueue(const StepBatch& batch, const std::vector<CardDraw>& draws, int32_t fed);
    void collect(std::vector<int32_t>& tokens);
    size_t queued_steps() const;
    // Whether rows with temperature > 0 can be drawn on the card (the plan resolved `sample`), and
    // greedy rows picked there (`argmax` or `sample`).
    bool sample_on_card() const;
    bool greedy_on_card() const;
    // Whether the card's pick ops take structured output's mask (their `mask` operand): rows
    // with CardDraw::allowed are picked there too; otherwise their logits come back.
    bool mask_on_card() const;

    // Where the host's time of the steps on a card went since the last reset (microseconds, summed):
    // checking the inputs, staging them (and queueing their copy), queueing the work (the graph or
    // the launches, the copies back), and waiting for it. A benchmark's view of the turnaround
    // between steps.
    struct HostTimes {
        int64_t steps = 0;
        double prepare_us = 0, stage_us = 0, queue_us = 0, wait_us = 0;
    };
    HostTimes host_times() const;
    void reset_host_times();

    // With the calibration tap on: writes what it has summed now, if it has not written yet (it
    // writes by itself once calib_tokens tokens have run). Throws naming the file it cannot write.
    void finish_calibration();

private:
    struct Impl;  // shared/engine/engine_impl.h
    Engine();
    std::unique_ptr<Impl> impl_;
};

// The container's metadata as the text map RadModelMeta carries.
std::map<std::string, std::string> meta_from_container(const container::Reader& r);

}  // namespace radiance::engine
