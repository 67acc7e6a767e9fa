// engine_impl.h: the engine's private state, Engine::Impl, shared by the files that each do one of
// its jobs. Private to rad_engine (not under include/): callers see only engine.h.
//
// Where each job lives:
//   engine.cpp          create() (the plan's order), teardown, the small accessors
//   engine_plan.cpp     ops: the kernel rows resolved into launch bands, their state and scratch
//   engine_weights.cpp  weights: read in place, widened, sliced for tensor parallelism, uploaded
//   engine_memory.cpp   owned memory (host or card), the card itself, arena, KV cache, staging
//   engine_issue.cpp    launches: operands into tensors, issue() into a kernel row, the RadCtx
//   engine_step.cpp     the step's checks, queue_step, step / enqueue / collect
//   engine_graphs.cpp   staging a step's inputs, running it on the card, decode graphs
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "calib_tap.h"
#include "radiance/engine/engine.h"
#include "radiance/engine/model_meta.h"
#include "kv_planes.h"

namespace radiance::engine {

namespace detail {

// Owned bytes: 64-byte aligned host memory, or device memory from the card's library (zeroed
// either way, so a buffer nothing wrote reads as zeros rather than old data).
struct Bytes {
    std::unique_ptr<uint8_t[]> raw;
    uint8_t* data = nullptr;
    uint64_t size = 0;
    const RadDeviceApi* dev = nullptr;
    Bytes() = default;
    Bytes(Bytes&& o) noexcept { *this = std::move(o); }
    Bytes& operator=(Bytes&& o) noexcept {
        if (this != &o) {
            reset();
            raw = std::move(o.raw);
            data = o.data;
            size = o.size;
            dev = o.dev;
            o.data = nullptr;
            o.size = 0;
            o.dev = nullptr;
        }
        return *this;
    }
    ~Bytes() { reset(); }
    void reset() {
        if (dev && data) dev->release(data);
        raw.reset();
        data = nullptr;
        size = 0;
        dev = nullptr;
    }
    void alloc(uint64_t n);  // engine_memory.cpp
    // On the card when `d` is set, else on the host; `what` names the use in the error.
    void alloc_on(const RadDeviceApi* d, uint64_t n, const char* what);
};

inline uint64_t elem_bytes(int dt) { return static_cast<uint64_t>(rad_dtype_bits(dt) / 8); }
// Dense bytes of a tensor: dim 0's rows of the trailing dims each (a sub-byte row starts on a byte).
inline uint64_t tensor_bytes(const RadTensor& t) {
    uint64_t inner = 1;
    for (int d = 1; d < t.rank; ++d) inner *= static_cast<uint64_t>(t.shape[d]);
    return static_cast<uint64_t>(t.rank > 0 ? t.shape[0] : 1) * rad_row_bytes(t.dtype, t.rank > 0 ? inner : 1);
}

struct LaunchBand {
    const core::KernelRow* row = nullptr;
    void* instance = nullptr;
    uint64_t scratch_bytes = 0;  // this band's need; every band shares the engine's one scratch area
    std::vector<core::ParamValue> derived_vals;
    std::vector<std::string> derived_names;
};

struct PlannedOp {
    std::vector<LaunchBand> bands;   // parallel to decl.ops[i].res.bands
    std::vector<std::string> names;  // parameter names (stable storage for RadParam.name)
    std::vector<core::ParamValue> values;
    int ranged_index = -1;
};

}  // namespace detail

struct Engine::Impl {
    using Bytes = detail::Bytes;
    using LaunchBand = detail::LaunchBand;
    using PlannedOp = detail::PlannedOp;

    EngineOptions opts;
    std::shared_ptr<const core::Registry> registry;  // keeps the plugins loaded
    std::shared_ptr<const container::Reader> model;
    std::unique_ptr<ModelMeta> meta;
    const core::ArchPlugin* arch = nullptr;
    Declaration decl;
    std::vector<PlannedOp> ops;
    // weights
    std::vector<RadTensor> weights;
    std::vector<Bytes> widened;
    // buffers
    Bytes arena, persist, scratch;
    std::vector<uint8_t*> buf_base;
    // KV: per group, per bound layer, its planes (K, V and, for an fp8 cache, their scales:
    // kv_planes.h)
    int block = 0;
    int64_t blocks = 0;
    std::vector<std::vector<std::array<Bytes, kMaxKvPlanes>>> kv;
    uint64_t kv_total = 0;
    int64_t max_out = 0;
    int64_t vocab = 0;
    // The pooled hidden output (rad_declare_pooled), when declared: rows it holds, their width, and
    // the last step's rows asked for by hidden_ids, as f32 [n_hidden, pooled_width]
    int64_t pooled_cap = 0, pooled_width = 0;
    std::vector<float> hidden_last;
    // the card, when the plan runs on one
    const RadDeviceApi* dev = nullptr;
    RadStream stream = nullptr;
    Bytes weights_dev;
    uint64_t weight_total = 0;
    // The step's inputs: fixed regions of a page-locked host area mirrored on the card, so raw
    // operands that point into it are translated to the card's copy, and a replayed graph finds
    // its inputs where it recorded them.
    struct StageRegion {
        uint64_t off = 0;
    };
    StageRegion st_tokens, st_pos, st_cu, st_seq, st_out, st_hid, st_q, st_ctx, st_ids, st_cfg, st_u, st_bt;
    // Structured output's masks ([max_out, mask_words] u32), after the block tables: copied only
    // by steps with a constrained row picked on the card (stage_mask_bytes), so others pay nothing.
    StageRegion st_mask;
    int64_t mask_words = 0;
    bool pick_mask = false;         // every pick op's schema has the `mask` operand
    uint64_t stage_mask_bytes = 0;  // this step's masks to copy (0: none)
    int argmax_op = -1;             // the engine's own ops: greedy tokens on the card (-1: no row serves it)
    int sample_op = -1;             // and sampled ones (temperature, top_k, top_p, min_p)
    int64_t stage_stride = 0;       // the widest block tables on the card (the plan's longest context)
    // Two slots of them: steps alternate, so a step can be staged while the one before it is still
    // queued (pipelined decode, Engine::enqueue); a recorded graph keeps its slot's addresses.
    uint8_t* stage_host = nullptr;  // both slots
    Bytes stage_dev;
    uint64_t stage_bytes = 0;    // one slot
    int slot = 1;                // the slot of the step staged last
    uint8_t* stage_h = nullptr;  // that slot on the host
    uint8_t* stage_d = nullptr;  // and on the card
    // Steps queued by Engine::enqueue and not collected yet, oldest first (at most one a slot),
    // each with the mark after its work (null where the library has no marks: collect syncs).
    struct Queued {
        int slot;
        size_t n_out;
        void* mark;
    };
    std::deque<Queued> queued;
    void* marks[2] = {nullptr, nullptr};
    std::vector<uint8_t> picked_last;  // which out rows of the last queued step the card picked (what the next may feed from)
    uint64_t stage_used = 0;           // this step's staged bytes, from the start of the area
    float* logits_h = nullptr;
    uint8_t* pooled_h = nullptr;  // a step's pooled rows read back from the card, in the pooled buffer's dtype
    // decode graphs keyed by (tokens, sequences, logits rows, every row a logits row in order,
    // block-table width, pick op or -1, staging slot, whether rows are fed from the previous step,
    // masks copied); null graph: seen once, not recorded
    std::map<std::array<int64_t, 9>, void*> graphs;
    // every collective row of the plan stays on the card's queue (rad_kernel_queued), so
    // a tensor-parallel decode step can be recorded too
    bool collectives_on_queue = true;
    const void* graph_generation = nullptr;  // the communicator's staging the graphs were recorded with
    // RADIANCE_PROFILE_OPS=1: every launch waited for and timed, a table per op at the end
    bool profile = false;
    std::map<std::string, std::pair<int64_t, double>> op_time;
    // RADIANCE_SKIP_OPS=rope,add_rms_norm: those ops are not launched at all. A measuring aid only
    // (the outputs are wrong): what an op costs inside a recorded decode step, launch gaps included,
    // which no per-kernel profile shows
    std::set<std::string> skip_ops;
    // The calibration tap (EngineOptions::calib_dir), or null
    std::unique_ptr<CalibTap> calib;
    void calib_tap(const OpDecl& d, const RadOperandRef* opds, int n_opds, const RadTensor* tensors);  // engine_issue.cpp
    ~Impl();  // engine.cpp
    // step state
    const RadBatch* batch = nullptr;
    std::string step_error;
    Engine::HostTimes host_times;

    // engine_plan.cpp
    void plan_ops();
    void plan_kernel_state();
    // engine_weights.cpp
    void plan_weights();
    bool row_spans(const WeightDecl& w, int64_t total_rows, std::vector<std::pair<int64_t, int64_t>>* spans, std::string* why);
    bool slice_weight(const WeightDecl& w, RadTensor* t, Bytes* owned, std::string* why);
    bool slice_plane(const WeightDecl& w, const RadPlaneDesc& p, int64_t rows, int64_t cols, RadTensor* t, Bytes* owned, std::string* why);
    uint64_t place_weights(uint64_t align, std::vector<uint64_t>* off, std::vector<char>* own) const;
    void upload_weights();
    // engine_memory.cpp
    void plan_device(const core::Registry& reg);
    void device_check(int rc, const char* what) const;
    void plan_buffers();
    uint64_t kv_budget() const;
    void plan_kv();
    void plan_staging();
    void widen_hidden(const uint8_t* rows, int64_t n_rows);
    void use_slot(int s) {
        slot = s;
        stage_h = stage_host + static_cast<uint64_t>(s) * stage_bytes;
        stage_d = stage_dev.data + static_cast<uint64_t>(s) * stage_bytes;
    }
    // engine_issue.cpp
    bool make_tensor(const RadOperandRef& r, RadTensor* t, std::string* why);
    int issue(rad_op op, const RadOperandRef* opds, int n_opds, int64_t n);
    // The RadCtx an architecture's step() issues through: its callbacks reach this Impl by ctx->impl.
    static const RadCtxApi kCtxApi;
    static Impl& of(RadCtx* c);
    static int ctx_issue(RadCtx* c, rad_op op, const RadOperandRef* opds, int n, int64_t rows);
    static void ctx_fail(RadCtx* c, const char* what);
    static int ctx_status(RadCtx* c);
    // engine_step.cpp
    std::vector<uint8_t> queue_step(const StepBatch& in, std::vector<float>& logits, const std::vector<CardDraw>& draws,
                                    std::span<const int32_t> fed_from, bool every_row_picked);
    // engine_graphs.cpp
    void stage_draws(const std::vector<CardDraw>& draws, const std::vector<uint8_t>& picked);
    void stage_masks(const std::vector<CardDraw>& draws, const std::vector<uint8_t>& picked);
    void stage_batch(const StepBatch& in, RadBatch* b);
    int64_t table_width(int64_t max_ctx) const;
    void run_on_device(RadCtx* ctx, const RadBatch* b, std::span<const int32_t> fed_from, int pick_op, const std::function<bool()>& pick);
};

}  // namespace radiance::engine
