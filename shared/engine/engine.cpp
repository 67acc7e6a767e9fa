// engine.cpp: plan (declare, resolve, arena, KV, weights) and step (issue -> kernel rows).
#include "radiance/engine/engine.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <climits>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <sstream>

#include "arena.h"
#include "radiance/engine/builder.h"
#include "radiance/engine/model_meta.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::engine {

namespace {

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
    void alloc(uint64_t n) {
        reset();
        raw.reset(new uint8_t[n + 64]());
        data = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw.get()) + 63) & ~uintptr_t{63});
        size = n;
    }
    // On the card when `d` is set, else on the host; `what` names the use in the error.
    void alloc_on(const RadDeviceApi* d, uint64_t n, const char* what) {
        if (!d) return alloc(n);
        reset();
        data = static_cast<uint8_t*>(d->alloc(n ? n : 1));
        if (!data) {
            uint64_t free_bytes = 0;
            d->mem_free(&free_bytes);
            throw Error(std::string("out of memory on the card for the ") + what + ": " + std::to_string(n) +
                        " bytes asked, " + std::to_string(free_bytes) + " free (" + d->last_error() + ")");
        }
        dev = d;
        size = n;
        if (n && d->fill(data, 0, n, nullptr) != RAD_OK) throw Error(std::string("cannot clear the ") + what + ": " + d->last_error());
    }
};

uint64_t elem_bytes(int dt) { return static_cast<uint64_t>(rad_dtype_bits(dt) / 8); }
uint64_t tensor_bytes(const RadTensor& t) { return rad_row_bytes(t.dtype, static_cast<uint64_t>(rad_tensor_elems(&t))); }

std::string status_name(int rc) {
    switch (rc) {
    case RAD_E_UNSUPPORTED: return "RAD_E_UNSUPPORTED";
    case RAD_E_DTYPE: return "RAD_E_DTYPE";
    case RAD_E_SHAPE: return "RAD_E_SHAPE";
    case RAD_E_ARG: return "RAD_E_ARG";
    case RAD_E_NOMEM: return "RAD_E_NOMEM";
    default: return "status " + std::to_string(rc);
    }
}

struct LaunchBand {
    const core::KernelRow* row = nullptr;
    void* instance = nullptr;
    uint64_t scratch_bytes = 0;  // this band's need; every band shares the engine's one scratch area
    std::vector<core::ParamValue> derived_vals;
    std::vector<std::string> derived_names;
};

struct PlannedOp {
    std::vector<LaunchBand> bands;  // parallel to decl.ops[i].res.bands
    std::vector<std::string> names;  // parameter names (stable storage for RadParam.name)
    std::vector<core::ParamValue> values;
    int ranged_index = -1;
};

}  // namespace

struct Engine::Impl {
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
    // KV: per group, per bound layer, K and V
    int block = 0;
    int64_t blocks = 0;
    std::vector<std::vector<std::array<Bytes, 2>>> kv;
    uint64_t kv_total = 0;
    int64_t max_out = 0;
    int64_t vocab = 0;
    // the card, when the plan runs on one
    const RadDeviceApi* dev = nullptr;
    RadStream stream = nullptr;
    Bytes weights_dev;
    uint64_t weight_total = 0;
    // The step's inputs: fixed regions of a page-locked host area mirrored on the card, so raw
    // operands that point into it are translated to the card's copy, and a replayed graph finds
    // its inputs where it recorded them.
    struct StageRegion { uint64_t off = 0; };
    StageRegion st_tokens, st_pos, st_cu, st_seq, st_out, st_q, st_ctx, st_ids, st_cfg, st_u, st_bt;
    int argmax_op = -1;  // the engine's own ops: greedy tokens on the card (-1: no row serves it)
    int sample_op = -1;  // and sampled ones (temperature, top_k, top_p, min_p)
    int64_t stage_stride = 0;  // the widest block tables on the card (the plan's longest context)
    // Two slots of them: steps alternate, so a step can be staged while the one before it is still
    // queued (pipelined decode, Engine::enqueue); a recorded graph keeps its slot's addresses.
    uint8_t* stage_host = nullptr;  // both slots
    Bytes stage_dev;
    uint64_t stage_bytes = 0;       // one slot
    int slot = 1;                   // the slot of the step staged last
    uint8_t* stage_h = nullptr;     // that slot on the host
    uint8_t* stage_d = nullptr;     // and on the card
    // Steps queued by Engine::enqueue and not collected yet, oldest first (at most one a slot),
    // each with the mark after its work (null where the library has no marks: collect syncs).
    struct Queued {
        int slot;
        size_t n_out;
        void* mark;
    };
    std::deque<Queued> queued;
    void* marks[2] = {nullptr, nullptr};
    int64_t pickable_next = 0;  // leading out rows of the last queued step whose tokens the card picked (what the next may feed)
    uint64_t stage_used = 0;  // this step's staged bytes, from the start of the area
    float* logits_h = nullptr;
    // decode graphs keyed by (tokens, sequences, logits rows, every row a logits row in order,
    // block-table width, pick op or -1, staging slot, rows fed from the previous step); null graph:
    // seen once, not recorded
    std::map<std::array<int64_t, 8>, void*> graphs;
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
    ~Impl();
    // step state
    const RadBatch* batch = nullptr;
    std::string step_error;
    Engine::HostTimes host_times;

    void plan_ops();
    void plan_weights();
    void plan_buffers();
    void plan_kv();
    uint64_t kv_budget() const;
    void plan_device(const core::Registry& reg);
    void upload_weights();
    void plan_staging();
    void stage_draws(const std::vector<CardDraw>& draws, const std::vector<uint8_t>& picked);
    void device_check(int rc, const char* what) const;
    void stage_batch(const StepBatch& in, RadBatch* b);
    void use_slot(int s) {
        slot = s;
        stage_h = stage_host + static_cast<uint64_t>(s) * stage_bytes;
        stage_d = stage_dev.data + static_cast<uint64_t>(s) * stage_bytes;
    }
    std::vector<uint8_t> queue_step(const StepBatch& in, std::vector<float>& logits, const std::vector<CardDraw>& draws,
                                    int64_t fed, bool every_row_picked);
    int64_t table_width(int64_t max_ctx) const;
    void run_on_device(RadCtx* ctx, const RadBatch* b, int64_t fed, int pick_op, const std::function<bool()>& pick);
    bool slice_weight(const WeightDecl& w, RadTensor* t, Bytes* owned, std::string* why);
    int issue(rad_op op, const RadOperandRef* opds, int n_opds, int64_t n);
    bool make_tensor(const RadOperandRef& r, RadTensor* t, std::string* why);
};

std::map<std::string, std::string> meta_from_container(const container::Reader& r) {
    std::map<std::string, std::string> kv;
    for (auto& [k, v] : r.meta()) kv[k] = v.to_string();
    return kv;
}

void Engine::Impl::plan_ops() {
    std::vector<std::string> errors;
    ops.resize(decl.ops.size());
    for (size_t i = 0; i < decl.ops.size(); ++i) {
        const OpDecl& d = decl.ops[i];
        if (!d.res.ok()) {
            if (!d.queried) errors.push_back("op " + std::to_string(i) + " '" + d.geom.op + "': " + d.res.error);
            continue;
        }
        PlannedOp& p = ops[i];
        for (auto& [k, v] : d.geom.params) {
            p.names.push_back(k);
            p.values.push_back(v);
        }
        if (!d.geom.ranged.empty()) {
            p.ranged_index = static_cast<int>(p.names.size());
            p.names.push_back(d.geom.ranged);
            p.values.push_back(core::ParamValue::of_int(d.geom.hi));
        }
        for (auto& band : d.res.bands) {
            LaunchBand lb;
            lb.row = band.winner;
            if (lb.row && lb.row->collective && !lb.row->queued) collectives_on_queue = false;  // it waits on the host
            for (auto& [k, v] : band.derived) {
                lb.derived_names.push_back(k);
                lb.derived_vals.push_back(core::ParamValue::of_int(v));
            }
            p.bands.push_back(std::move(lb));
        }
    }
    if (!errors.empty()) {
        std::string msg = "the plan has ops no kernel row serves (is a kernel library for this machine installed?):";
        for (auto& e : errors) msg += "\n  " + e;
        throw Error(msg);
    }
    for (auto& op : decl.ops)
        for (auto& band : op.res.bands)
            if (auto it = band.derived.find("block"); it != band.derived.end()) {
                if (block && block != it->second)
                    throw Error("attention kernels disagree on the KV block size (" + std::to_string(block) + " vs " +
                                std::to_string(it->second) + ")");
                block = static_cast<int>(it->second);
            }
}

void Engine::Impl::plan_weights() {
    std::vector<std::string> errors;
    weights.resize(decl.weights.size());
    widened.resize(decl.weights.size());
    for (size_t i = 0; i < decl.weights.size(); ++i) {
        const WeightDecl& w = decl.weights[i];
        RadTensor& t = weights[i];
        std::memset(&t, 0, sizeof t);
        const container::TensorInfo* ti = model->find(w.stored_name());
        if (!ti) {
            if (!w.d.optional)
                errors.push_back("weight '" + w.name + "'" + (w.source.empty() ? "" : " (stored as '" + w.source + "')") +
                                 " is not in " + model->path());
            continue;
        }
        const RadEncoding& enc = model->encodings()[ti->encoding];
        if (std::strcmp(enc.scheme, "plain") != 0 || enc.n_planes != 1) {
            errors.push_back("weight '" + w.name + "' is stored in encoding '" + enc.scheme +
                             "', which no kernel of this plan reads");
            continue;
        }
        bool shape_ok = ti->shape.size() == static_cast<size_t>(w.d.rank);
        for (int d = 0; shape_ok && d < w.d.rank; ++d) shape_ok = ti->shape[d] == w.d.shape[d];
        if (!shape_ok) {
            std::ostringstream os;
            os << "weight '" << w.name << "' in " << model->path() << " has shape [";
            for (size_t d = 0; d < ti->shape.size(); ++d) os << (d ? ", " : "") << ti->shape[d];
            os << "] but the architecture declares [";
            for (int d = 0; d < w.d.rank; ++d) os << (d ? ", " : "") << w.d.shape[d];
            os << "]";
            errors.push_back(os.str());
            continue;
        }
        const int stored = enc.planes[0].dtype;
        t.rank = w.d.rank;
        for (int d = 0; d < w.d.rank; ++d) t.shape[d] = w.d.shape[d];
        t.dtype = stored;
        t.data = const_cast<uint8_t*>(model->plane_data(*ti, 0));  // read in place from the mapping
        if (opts.world_size > 1 && w.d.shard != RAD_SHARD_NONE) {
            std::string why;
            if (!slice_weight(w, &t, &widened[i], &why)) {
                errors.push_back("weight '" + w.name + "': " + why);
                continue;
            }
        }
        if (w.d.dtype != RAD_DT_NONE && w.d.dtype != stored) {
            bool widen = w.d.dtype == RAD_F32 && (stored == RAD_BF16 || stored == RAD_F16);
            if (!widen) {
                errors.push_back("weight '" + w.name + "' is stored as " + rad_dtype_name(stored) + " but declared " +
                                 rad_dtype_name(w.d.dtype) + " (only exact widening is allowed)");
                continue;
            }
            const int64_t n = rad_tensor_elems(&t);
            Bytes wide;
            wide.alloc(static_cast<uint64_t>(n) * 4);
            for (int64_t k = 0; k < n; ++k) rad_store_f32(RAD_F32, wide.data, k, rad_load_f32(stored, t.data, k));
            widened[i] = std::move(wide);
            t.data = widened[i].data;
            t.dtype = RAD_F32;
        }
    }
    if (!errors.empty()) {
        std::string msg = "the model's weights do not fit its architecture:";
        for (auto& e : errors) msg += "\n  " + e;
        throw Error(msg);
    }
}

// This rank's slice of a sharded weight: ROW takes a span of every stacked part's rows (a rank
// owns a slice of q, of k and of v, never a contiguous slice of the stack), COL a span of columns.
// Spans are [r * P / W, (r + 1) * P / W), so widths that do not divide give uneven spans.
bool Engine::Impl::slice_weight(const WeightDecl& w, RadTensor* t, Bytes* owned, std::string* why) {
    const int64_t W = opts.world_size, r = opts.rank;
    const uint64_t es = elem_bytes(t->dtype);
    if (!es) return *why = "cannot slice a sub-byte encoding", false;
    auto span = [&](int64_t P) { return std::make_pair(r * P / W, (r + 1) * P / W); };
    // Row parts of whole units (heads): split by units, or replicated when the part has fewer
    // units than ranks (RadWeightDecl.row_unit).
    const int64_t unit = w.d.shard == RAD_SHARD_ROW ? w.d.row_unit : 0;
    std::string unit_error;
    auto row_span = [&](int64_t P) -> std::pair<int64_t, int64_t> {
        if (unit <= 0) return span(P);
        const int64_t U = P / unit;
        if (U * unit != P) {
            unit_error = "a part of " + std::to_string(P) + " rows is not whole units of " + std::to_string(unit);
            return {0, 0};
        }
        if (U >= W) return {r * U / W * unit, (r + 1) * U / W * unit};
        if (W % U) {
            unit_error = "a part of " + std::to_string(U) + " units cannot be replicated evenly over " + std::to_string(W) + " ranks";
            return {0, 0};
        }
        const int64_t u = r * U / W;
        return {u * unit, (u + 1) * unit};
    };
    const auto* src = static_cast<const uint8_t*>(t->data);
    if (w.d.shard == RAD_SHARD_ROW) {
        uint64_t row_bytes = es;
        for (int d = 1; d < t->rank; ++d) row_bytes *= static_cast<uint64_t>(t->shape[d]);
        std::vector<int64_t> parts = w.row_parts.empty() ? std::vector<int64_t>{t->shape[0]} : w.row_parts;
        int64_t total = 0, local = 0;
        for (int64_t p : parts) {
            total += p;
            auto [a, b] = row_span(p);
            local += b - a;
        }
        if (!unit_error.empty()) return *why = unit_error, false;
        if (total != t->shape[0]) return *why = "row parts add up to " + std::to_string(total) + ", not " + std::to_string(t->shape[0]), false;
        owned->alloc(static_cast<uint64_t>(local) * row_bytes);
        uint64_t off = 0;
        int64_t base = 0;
        for (int64_t p : parts) {
            auto [a, b] = row_span(p);
            std::memcpy(owned->data + off, src + static_cast<uint64_t>(base + a) * row_bytes, static_cast<uint64_t>(b - a) * row_bytes);
            off += static_cast<uint64_t>(b - a) * row_bytes;
            base += p;
        }
        t->shape[0] = local;
    } else {
        if (t->rank != 2) return *why = "a column split needs a 2-D weight", false;
        auto [a, b] = span(t->shape[1]);
        owned->alloc(static_cast<uint64_t>(t->shape[0] * (b - a)) * es);
        for (int64_t i = 0; i < t->shape[0]; ++i)
            std::memcpy(owned->data + static_cast<uint64_t>(i * (b - a)) * es, src + static_cast<uint64_t>(i * t->shape[1] + a) * es,
                        static_cast<uint64_t>(b - a) * es);
        t->shape[1] = b - a;
    }
    t->data = owned->data;
    return true;
}

void Engine::Impl::plan_buffers() {
    std::vector<ArenaItem> items;
    std::vector<size_t> which;
    uint64_t persist_bytes = 0;
    std::vector<uint64_t> persist_off(decl.buffers.size(), 0);
    for (size_t i = 0; i < decl.buffers.size(); ++i) {
        const BufferDecl& b = decl.buffers[i];
        uint64_t n = elem_bytes(b.d.dtype);
        for (int d = 0; d < b.d.rank; ++d) n *= static_cast<uint64_t>(b.d.shape[d]);
        if (b.d.kind == RAD_BUF_PERSIST) {
            persist_off[i] = persist_bytes;
            persist_bytes += (n + 255) / 256 * 256;
            continue;
        }
        ArenaItem it;
        it.bytes = n;
        // An undeclared use is assumed live for the whole program; the logits outlive the step.
        bool whole = b.first_use < 0 || static_cast<rad_buf>(i) == decl.logits;
        it.first = whole ? 0 : b.first_use;
        it.last = whole ? INT_MAX : b.last_use;
        items.push_back(it);
        which.push_back(i);
    }
    uint64_t total = plan_arena(items);
    arena.alloc_on(dev, total, "activation arena");
    persist.alloc_on(dev, persist_bytes, "persistent buffers");
    buf_base.assign(decl.buffers.size(), nullptr);
    for (size_t k = 0; k < items.size(); ++k) buf_base[which[k]] = arena.data + items[k].offset;
    for (size_t i = 0; i < decl.buffers.size(); ++i)
        if (decl.buffers[i].d.kind == RAD_BUF_PERSIST) buf_base[i] = persist.data + persist_off[i];
}

// Memory the KV cache may take when --kv-blocks is not given. On a card: what is free now (weights
// and buffers are placed), less the share memory_utilization leaves to other processes and a
// reserve for what is allocated after the cache (kernel scratch, staging, decode graphs: 5% of
// the card, at most 1 GiB). On the host: half of MemAvailable.
uint64_t Engine::Impl::kv_budget() const {
    if (dev) {
        const uint64_t kReserve = std::min<uint64_t>(1ull << 30, dev->memory_bytes / 20);
        uint64_t free_bytes = 0;
        if (dev->mem_free(&free_bytes) != RAD_OK) throw Error(std::string("cannot read the card's free memory: ") + dev->last_error());
        const double util = opts.memory_utilization;
        if (!(util > 0 && util <= 1)) throw Error("memory utilization " + std::to_string(util) + " is not in (0, 1]");
        const auto others = static_cast<uint64_t>((1.0 - util) * static_cast<double>(dev->memory_bytes));
        return free_bytes > others + kReserve ? free_bytes - others - kReserve : 0;
    }
    std::ifstream meminfo("/proc/meminfo");
    for (std::string key; meminfo >> key;) {
        uint64_t kib = 0;
        meminfo >> kib;
        if (key == "MemAvailable:") return kib * 1024 / 2;
        meminfo.ignore(256, '\n');
    }
    return UINT64_MAX;  // not Linux: no bound known
}

void Engine::Impl::plan_kv() {
    if (decl.kv_groups.empty()) return;
    if (block <= 0) throw Error("the model declares KV groups but no attention kernel fixed a block size");
    uint64_t block_bytes = 0;  // one block in every layer of every group, K and V
    for (const auto& g : decl.kv_groups)
        block_bytes += 2 * g.layers.size() * static_cast<uint64_t>(block) * g.d.n_head_kv * g.d.head_dim * elem_bytes(g.d.dtype);
    const int64_t per_seq = (opts.max_ctx + block - 1) / block;
    const int64_t wanted = per_seq * opts.max_seqs;
    blocks = opts.kv_blocks;
    if (blocks <= 0) {
        const uint64_t fit = block_bytes ? kv_budget() / block_bytes : UINT64_MAX;
        blocks = static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(wanted), fit));
        if (blocks < wanted)
            log::info("KV cache: ", blocks, " blocks of ", block, " tokens fit in memory (", opts.max_seqs, " sequences of ",
                      opts.max_ctx, " would need ", wanted, ")");
        if (blocks < 1) throw Error("no memory is left for the KV cache (one block needs " + std::to_string(block_bytes) + " bytes)");
    }
    kv.resize(decl.kv_groups.size());
    for (size_t g = 0; g < decl.kv_groups.size(); ++g) {
        const RadKvGroupDecl& d = decl.kv_groups[g].d;
        uint64_t bytes = static_cast<uint64_t>(blocks) * block * d.n_head_kv * d.head_dim * elem_bytes(d.dtype);
        kv[g].resize(decl.kv_groups[g].layers.size());
        for (auto& planes : kv[g])
            for (auto& p : planes) {
                p.alloc_on(dev, bytes, "KV cache");
                kv_total += bytes;
            }
    }
}

void Engine::Impl::device_check(int rc, const char* what) const {
    if (rc != RAD_OK) throw Error(std::string("the card failed ") + what + ": " + (dev ? dev->last_error() : "?"));
}

void Engine::Impl::plan_device(const core::Registry& reg) {
    const std::string& p = opts.placement;
    if (p != "auto" && p != "host" && p != "device")
        throw Error("placement '" + p + "' is not one of auto, host, device");
    if (p == "host") return;
    const core::KernelLibrary* lib = reg.device_library();
    if (!lib) {
        if (p == "device")
            throw Error("placement 'device' asked for a card, but no loaded kernel library brings one "
                        "(rad-info --plugins lists which libraries declined this machine and why)");
        return;
    }
    dev = lib->device;
    stream = dev->stream_create();
    if (!stream) throw Error(std::string("cannot create a queue on the card: ") + dev->last_error());
    log::info("placing the plan on ", dev->runtime, " ", dev->name, " (card ", dev->ordinal, ", from kernel library '",
              lib->plugin->name, "')");
}

// Every weight in one allocation on the card, in declaration order, 256-byte aligned.
void Engine::Impl::upload_weights() {
    uint64_t total = 0;
    std::vector<uint64_t> off(weights.size(), 0);
    for (size_t i = 0; i < weights.size(); ++i) {
        if (!weights[i].data) continue;
        off[i] = total;
        total += (tensor_bytes(weights[i]) + 255) / 256 * 256;
    }
    weights_dev.alloc_on(dev, total, "weights");
    weight_total = total;
    for (size_t i = 0; i < weights.size(); ++i) {
        if (!weights[i].data) continue;
        device_check(dev->copy(weights_dev.data + off[i], weights[i].data, tensor_bytes(weights[i]), RAD_COPY_H2D, stream),
                     ("copying weight '" + decl.weights[i].name + "'").c_str());
        weights[i].data = weights_dev.data + off[i];
    }
    device_check(dev->sync(stream), "copying the weights");
    widened.clear();  // the host copies of sliced or widened weights are no longer read
}

void Engine::Impl::plan_staging() {
    stage_stride = block > 0 ? (opts.max_ctx + block - 1) / block : 1;
    uint64_t at = 0;
    auto region = [&](StageRegion& r, int64_t n_i32) {
        r.off = at;
        at += (static_cast<uint64_t>(n_i32) * 4 + 255) / 256 * 256;
    };
    region(st_cu, opts.max_seqs + 1);
    region(st_seq, opts.max_seqs);
    region(st_q, opts.max_seqs);
    region(st_ctx, opts.max_seqs);
    region(st_out, max_out);
    region(st_ids, max_out);
    region(st_cfg, 4 * max_out);  // sample's settings: f32 [rows, 4]
    region(st_u, 2 * max_out);    // and its draws: f64 [rows]
    region(st_tokens, opts.max_tok);
    region(st_pos, opts.max_tok);
    region(st_bt, static_cast<int64_t>(opts.max_seqs) * stage_stride);  // last: copies stop where the tables do
    stage_bytes = at;
    stage_host = static_cast<uint8_t*>(dev->alloc_host(2 * stage_bytes));
    logits_h = static_cast<float*>(dev->alloc_host(static_cast<uint64_t>(max_out * vocab) * 4));
    if (!stage_host || !logits_h) throw Error(std::string("cannot lock host memory for the step's inputs: ") + dev->last_error());
    std::memset(stage_host, 0, 2 * stage_bytes);
    stage_dev.alloc_on(dev, 2 * stage_bytes, "step inputs");
    if (dev->mark_create && dev->mark_record && dev->mark_wait && dev->mark_destroy)
        for (void*& mk : marks)
            if (!(mk = dev->mark_create())) throw Error(std::string("cannot create a queue mark: ") + dev->last_error());
    use_slot(0);
}

Engine::Impl::~Impl() {
    if (profile && !op_time.empty()) {
        double total = 0;
        for (auto& [k, v] : op_time) total += v.second;
        std::fprintf(stderr, "%-44s %10s %12s %8s\n", "op (kernel)", "launches", "ms total", "share");
        for (auto& [k, v] : op_time)
            std::fprintf(stderr, "%-44s %10lld %12.3f %7.1f%%\n", k.c_str(), static_cast<long long>(v.first), 1e3 * v.second,
                         100.0 * v.second / total);
    }
    if (!dev) return;
    if (stream) dev->sync(stream);
    for (auto& [k, g] : graphs)
        if (g) dev->graph_destroy(g);
    for (void* mk : marks)
        if (mk) dev->mark_destroy(mk);
    if (stage_host) dev->release_host(stage_host);
    if (logits_h) dev->release_host(logits_h);
    if (stream) dev->stream_destroy(stream);
}

bool Engine::Impl::make_tensor(const RadOperandRef& r, RadTensor* t, std::string* why) {
    std::memset(t, 0, sizeof *t);
    switch (r.kind) {
    case RAD_OPND_NONE: return true;
    case RAD_OPND_WEIGHT:
        if (r.handle < 0 || static_cast<size_t>(r.handle) >= weights.size()) return *why = "bad weight handle", false;
        *t = weights[r.handle];
        return true;
    case RAD_OPND_RAW:
        t->data = const_cast<void*>(r.ptr);
        if (dev) {  // only the step's inputs reach the card: point at their copy there
            const auto* p = static_cast<const uint8_t*>(r.ptr);
            if (p < stage_host || p >= stage_host + 2 * stage_bytes)
                return *why = "a raw operand that is not one of the step's inputs cannot reach the card", false;
            t->data = stage_dev.data + (p - stage_host);
        }
        t->dtype = r.dtype;
        t->rank = r.cols > 0 ? 2 : 1;
        t->shape[0] = r.rows;
        if (r.cols > 0) t->shape[1] = r.cols;
        return true;
    case RAD_OPND_BUF: {
        if (r.handle < 0 || static_cast<size_t>(r.handle) >= decl.buffers.size()) return *why = "bad buffer handle", false;
        const BufferDecl& b = decl.buffers[r.handle];
        if (r.rows > b.d.shape[0]) return *why = "buffer '" + b.name + "' has " + std::to_string(b.d.shape[0]) + " rows, " +
                                                   std::to_string(r.rows) + " asked", false;
        const int64_t width = b.d.shape[b.d.rank - 1];
        if (r.col0 < 0 || r.col0 + (r.cols ? r.cols : width) > width)
            return *why = "view outside buffer '" + b.name + "'", false;
        uint64_t row_bytes = elem_bytes(b.d.dtype);
        for (int d = 1; d < b.d.rank; ++d) row_bytes *= static_cast<uint64_t>(b.d.shape[d]);
        t->data = buf_base[r.handle] + r.col0 * static_cast<int64_t>(elem_bytes(b.d.dtype));
        t->dtype = b.d.dtype;
        t->rank = b.d.rank;
        for (int d = 0; d < b.d.rank; ++d) t->shape[d] = b.d.shape[d];
        t->shape[0] = r.rows;
        if (r.cols) t->shape[b.d.rank - 1] = r.cols;
        t->row_pitch = static_cast<int64_t>(row_bytes);
        return true;
    }
    case RAD_OPND_KV: {
        if (r.handle < 0 || static_cast<size_t>(r.handle) >= decl.kv_groups.size()) return *why = "bad KV group", false;
        const KvGroupDecl& g = decl.kv_groups[r.handle];
        auto it = std::find(g.layers.begin(), g.layers.end(), r.layer);
        if (it == g.layers.end() || r.col0 < 0 || r.col0 > 1)
            return *why = "layer " + std::to_string(r.layer) + " is not bound to KV group '" + g.name + "'", false;
        Bytes& p = kv[r.handle][static_cast<size_t>(it - g.layers.begin())][static_cast<size_t>(r.col0)];
        t->data = p.data;
        t->dtype = g.d.dtype;
        t->rank = 4;
        t->shape[0] = blocks;
        t->shape[1] = block;
        t->shape[2] = g.d.n_head_kv;
        t->shape[3] = g.d.head_dim;
        return true;
    }
    }
    return *why = "unknown operand kind", false;
}

int Engine::Impl::issue(rad_op op, const RadOperandRef* opds, int n_opds, int64_t n) {
    auto fail = [&](const std::string& why, int rc) {
        if (step_error.empty()) step_error = why;
        return rc;
    };
    if (op < 0 || static_cast<size_t>(op) >= decl.ops.size()) return fail("issue of an undeclared op handle", RAD_E_ARG);
    const OpDecl& d = decl.ops[op];
    const std::string where = "op " + std::to_string(op) + " '" + d.geom.op + "'";
    if (!d.res.ok()) return fail(where + " was issued but never resolved: " + d.res.error, RAD_E_UNSUPPORTED);
    if (n <= 0) return RAD_E_SHAPE;  // zero rows is not a call
    PlannedOp& p = ops[op];
    if (!d.geom.ranged.empty() && (n < d.geom.lo || n > d.geom.hi))
        return fail(where + ": " + d.geom.ranged + " = " + std::to_string(n) + " is outside its declared range [" +
                        std::to_string(d.geom.lo) + ", " + std::to_string(d.geom.hi) + "]",
                    RAD_E_SHAPE);
    size_t bi = 0;
    while (bi < d.res.bands.size() && !(n >= d.res.bands[bi].lo && n <= d.res.bands[bi].hi)) ++bi;
    if (d.geom.ranged.empty()) bi = 0;
    if (bi >= p.bands.size()) return fail(where + ": no band for " + std::to_string(n), RAD_E_SHAPE);
    LaunchBand& band = p.bands[bi];
    if (!skip_ops.empty() && skip_ops.count(d.geom.op)) return RAD_OK;
    RadTensor tensors[16];
    if (n_opds > 16) return fail(where + ": too many operands", RAD_E_ARG);
    for (int i = 0; i < n_opds; ++i) {
        std::string why;
        if (!make_tensor(opds[i], &tensors[i], &why)) return fail(where + " operand " + std::to_string(i) + ": " + why, RAD_E_ARG);
    }
    RadParam params[48];
    size_t np = 0;
    auto push = [&](const std::string& name, const core::ParamValue& v) {
        if (np >= 48) return;
        RadParam& q = params[np++];
        std::memset(&q, 0, sizeof q);
        q.name = name.c_str();
        q.type = v.type;
        q.i = v.i;
        q.f = v.f;
        q.s = v.type == RAD_P_STR ? v.s.c_str() : nullptr;  // only persistent strings are passed
    };
    for (size_t i = 0; i < p.names.size(); ++i) {
        if (static_cast<int>(i) == p.ranged_index)
            push(p.names[i], core::ParamValue::of_int(n));
        else
            push(p.names[i], p.values[i]);
    }
    for (size_t i = 0; i < band.derived_names.size(); ++i) push(band.derived_names[i], band.derived_vals[i]);
    RadArgs a;
    std::memset(&a, 0, sizeof a);
    a.t = tensors;
    a.n_t = n_opds;
    a.p = params;
    a.n_p = static_cast<int32_t>(np);
    a.instance = band.instance;
    a.scratch = band.scratch_bytes ? scratch.data : nullptr;
    a.scratch_bytes = band.scratch_bytes;
    a.rank = opts.rank;
    a.world_size = opts.world_size;
    a.comm = opts.comm;
    a.stream = stream;
    if (profile && dev) dev->sync(stream);  // earlier work (the input copy) is not this op's
    const auto t0 = profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    int rc = band.row->info->launch(&a);
    if (profile) {
        if (dev) dev->sync(stream);
        auto& [count, secs] = op_time[d.geom.op + " (" + band.row->info->name + ")"];
        ++count;
        secs += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    if (rc != RAD_OK)
        return fail(where + " failed in kernel " + band.row->lib->plugin->name + ":" + band.row->info->name + " with " +
                        status_name(rc),
                    rc);
    return RAD_OK;
}

namespace {
Engine::Impl& impl_of(RadCtx* c) { return *static_cast<Engine::Impl*>(c->impl); }
int ctx_issue(RadCtx* c, rad_op op, const RadOperandRef* opds, int n, int64_t rows) { return impl_of(c).issue(op, opds, n, rows); }
void ctx_fail(RadCtx* c, const char* what) {
    auto& i = impl_of(c);
    if (i.step_error.empty()) i.step_error = what ? what : "step failed";
}
int ctx_status(RadCtx* c) { return impl_of(c).step_error.empty() ? RAD_OK : RAD_E_INTERNAL; }
const RadCtxApi kCtxApi = {sizeof(RadCtxApi), ctx_issue, ctx_fail, ctx_status, {}};
}  // namespace

Engine::Engine() : impl_(std::make_unique<Impl>()) {}
Engine::~Engine() {
    if (!impl_) return;
    for (auto& op : impl_->ops)
        for (auto& b : op.bands)
            if (b.instance && b.row && b.row->info->fini) b.row->info->fini(b.instance);
}

std::unique_ptr<Engine> Engine::create(std::shared_ptr<const core::Registry> registry,
                                       std::shared_ptr<const container::Reader> model, const EngineOptions& opts) {
    std::unique_ptr<Engine> e(new Engine());
    Impl& m = *e->impl_;
    m.opts = opts;
    if (const char* p = std::getenv("RADIANCE_PROFILE_OPS"); p && *p && std::strcmp(p, "0") != 0) {
        m.profile = true;
        m.opts.graphs = false;  // a graph would hide the launches
    }
    if (const char* p = std::getenv("RADIANCE_SKIP_OPS"); p && *p) {
        std::string list = p;
        for (size_t at = 0; at <= list.size();) {
            const size_t comma = std::min(list.find(',', at), list.size());
            if (comma > at) m.skip_ops.insert(list.substr(at, comma - at));
            at = comma + 1;
        }
        std::fprintf(stderr, "[warn] RADIANCE_SKIP_OPS=%s: those ops are not launched; outputs are wrong (timing aid)\n", p);
    }
    m.registry = std::move(registry);
    const core::Registry& reg = *m.registry;
    m.model = std::move(model);
    m.meta = std::make_unique<ModelMeta>(meta_from_container(*m.model));
    m.arch = &reg.arch(m.meta->value(meta_key::arch), m.meta->value(meta_key::quant));
    DeclareOptions d;
    d.ctx.rank = opts.rank;
    d.ctx.world_size = opts.world_size;
    d.ctx.max_tok = opts.max_tok;
    d.ctx.max_seqs = opts.max_seqs;
    d.ctx.max_ctx = opts.max_ctx;
    d.ctx.max_mixed_tok = opts.max_tok;
    d.ctx.max_out_rows = opts.max_out_rows;
    d.ctx.kv_dtype = RAD_F32;
    d.ctx.act_dtype = RAD_F32;
    d.select = opts.select;
    d.select.facts[RAD_FACT_WORLD] = opts.world_size;
    m.plan_device(reg);
    if (m.dev) {
        d.select.domains = {RAD_DOMAIN_DEVICE};
        d.select.facts[RAD_FACT_GPU] = 1;
        d.select.facts[RAD_FACT_CC] = m.dev->cc;
        // Rank r binds card r (mod the cards it sees): the group's cards reach each other when
        // they all sit among the library's mutually reachable ones.
        if (m.dev->struct_size >= sizeof(RadDeviceApi)) {
            d.select.facts[RAD_FACT_P2P] = opts.world_size > 1 && opts.world_size <= m.dev->peer_cards ? 1 : 0;
            d.select.facts[RAD_FACT_DISTINCT] = opts.world_size <= std::max(1, m.dev->cards) ? 1 : 0;
        }
        d.ctx.kv_dtype = RAD_BF16;
    }
    if (opts.kv_dtype) d.ctx.kv_dtype = opts.kv_dtype;
    const container::Reader* r = m.model.get();
    d.encoding = [r](const std::string& name, const std::vector<NameMapEntry>&) -> std::optional<RadEncoding> {
        const container::TensorInfo* t = r->find(name);
        if (!t) return std::nullopt;
        return r->encodings()[t->encoding];
    };
    m.decl = declare(*m.arch, reg, *m.meta, d);
    if (m.decl.logits == RAD_NULL_HANDLE) throw Error("architecture '" + m.arch->plugin->name + "' declared no logits buffer");
    const BufferDecl& lg = m.decl.buffers[m.decl.logits];
    if (lg.d.dtype != RAD_F32) throw Error("the logits buffer must be f32");
    m.max_out = lg.d.shape[0];
    m.vocab = lg.d.shape[lg.d.rank - 1];
    if (m.dev) {  // tokens picked where the logits are, when the card's library has the ops
        for (const char* op : {"argmax", "sample"}) {
            OpDecl od;
            od.geom.op = op;
            od.geom.params["vocab"] = core::ParamValue::of_int(m.vocab);
            od.geom.ranged = "n";
            od.geom.lo = 1;
            od.geom.hi = m.max_out;
            od.res = core::resolve(reg, od.geom, d.select);
            od.queried = true;  // optional: without it those rows' logits come back
            if (od.res.ok()) (std::string(op) == "argmax" ? m.argmax_op : m.sample_op) = static_cast<int>(m.decl.ops.size());
            m.decl.ops.push_back(std::move(od));
        }
    }
    m.plan_ops();
    m.plan_weights();
    if (m.dev) {
        m.upload_weights();
    } else {
        for (const RadTensor& t : m.weights)
            if (t.data) m.weight_total += tensor_bytes(t);
    }
    m.plan_buffers();
    m.plan_kv();
    if (m.dev) m.plan_staging();
    // Per-band kernel state and scratch, sized from the band's upper bound. Launches run one after
    // another on one queue, so every band's scratch is the same bytes, sized for the largest.
    uint64_t scratch_max = 0;
    for (size_t i = 0; i < m.ops.size(); ++i)
        for (size_t b = 0; b < m.ops[i].bands.size(); ++b) {
            LaunchBand& lb = m.ops[i].bands[b];
            if (!lb.row || (!lb.row->info->init && !lb.row->info->scratch)) continue;
            std::vector<RadParam> ps;
            for (size_t k = 0; k < m.ops[i].names.size(); ++k) {
                RadParam q{};
                q.name = m.ops[i].names[k].c_str();
                q.type = m.ops[i].values[k].type;
                q.i = static_cast<int>(k) == m.ops[i].ranged_index ? m.decl.ops[i].res.bands[b].hi : m.ops[i].values[k].i;
                q.f = m.ops[i].values[k].f;
                q.s = m.ops[i].values[k].s.c_str();
                ps.push_back(q);
            }
            RadArgs geom{};
            geom.p = ps.data();
            geom.n_p = static_cast<int32_t>(ps.size());
            geom.rank = opts.rank;
            geom.world_size = opts.world_size;
            geom.stream = m.stream;
            if (lb.row->info->scratch) {
                lb.scratch_bytes = lb.row->info->scratch(&geom);
                scratch_max = std::max(scratch_max, lb.scratch_bytes);
            }
            if (lb.row->info->init && lb.row->info->init(&geom, &lb.instance) != RAD_OK)
                throw Error(std::string("kernel ") + lb.row->info->name + " failed to initialise for op '" +
                            m.decl.ops[i].geom.op + "'");
        }
    m.scratch.alloc_on(m.dev, scratch_max, "kernel scratch");
    if (m.dev) m.device_check(m.dev->sync(m.stream), "finishing the plan");
    log::info("planned ", m.arch->plugin->name, " on ", e->placement(), ": ", m.decl.ops.size(), " ops, ", m.decl.weights.size(),
              " weights (", m.weight_total, " bytes), arena ", m.arena.size, " bytes, KV ", m.kv_total, " bytes (", m.blocks,
              " blocks of ", m.block, ")");
    return e;
}

int Engine::kv_block_size() const { return impl_->block; }
int64_t Engine::kv_blocks() const { return impl_->blocks; }
int64_t Engine::vocab() const { return impl_->vocab; }
bool Engine::sample_on_card() const { return impl_->sample_op >= 0; }
Engine::HostTimes Engine::host_times() const { return impl_->host_times; }
void Engine::reset_host_times() { impl_->host_times = {}; }
int64_t Engine::max_out_rows() const { return impl_->max_out; }
const Declaration& Engine::declaration() const { return impl_->decl; }
uint64_t Engine::arena_bytes() const { return impl_->arena.size; }
uint64_t Engine::kv_bytes() const { return impl_->kv_total; }
uint64_t Engine::weight_bytes() const { return impl_->weight_total; }
std::string Engine::placement() const {
    if (!impl_->dev) return "host";
    return std::string(impl_->dev->runtime) + " " + impl_->dev->name;
}

std::string Engine::selection_report() const {
    std::string out;
    for (auto& op : impl_->decl.ops) out += core::explain(op.res);
    return out;
}

void Engine::step(const StepBatch& in, std::vector<float>& logits) {
    std::vector<int32_t> none;
    step(in, logits, {}, none);
}

namespace {
using Clock = std::chrono::steady_clock;
double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
}  // namespace

// Checks the step, stages its inputs in the next slot and queues its work on the card (on the
// host: runs it and fills `logits`). Returns which out rows get their token picked on the card;
// the logits of the others are queued to come back to logits_h. With every_row_picked a step
// whose rows cannot all be picked there is refused before anything is staged. Its first `fed`
// token rows take the tokens the card picked for the previous step's first out rows.
std::vector<uint8_t> Engine::Impl::queue_step(const StepBatch& in, std::vector<float>& logits, const std::vector<CardDraw>& draws,
                                              int64_t fed, bool every_row_picked) {
    Impl& m = *this;
    const auto t_enter = Clock::now();
    const int64_t n_tok = static_cast<int64_t>(in.tokens.size());
    const int64_t n_seq = static_cast<int64_t>(in.cu_seqlens.size()) - 1;
    auto bad = [](const std::string& s) { throw Error("bad step: " + s); };
    if (n_tok <= 0 || n_tok > m.opts.max_tok) bad(std::to_string(n_tok) + " tokens (at most " + std::to_string(m.opts.max_tok) + ")");
    if (in.positions.size() != in.tokens.size()) bad("positions and tokens differ in length");
    if (n_seq <= 0 || n_seq > m.opts.max_seqs || in.cu_seqlens[0] != 0 || in.cu_seqlens[n_seq] != n_tok)
        bad("cu_seqlens must run from 0 to the token count over 1.." + std::to_string(m.opts.max_seqs) + " sequences");
    for (int64_t s = 0; s < n_seq; ++s)
        if (in.cu_seqlens[s + 1] <= in.cu_seqlens[s]) bad("sequence " + std::to_string(s) + " has no tokens");
    if (static_cast<int64_t>(in.out_ids.size()) > m.max_out) bad("more logits rows than the plan holds");
    for (int32_t o : in.out_ids)
        if (o < 0 || o >= n_tok) bad("out id " + std::to_string(o) + " outside the step");
    const int64_t stride = in.block_table_stride;
    if (!m.decl.kv_groups.empty()) {
        if (stride <= 0 || static_cast<int64_t>(in.block_tables.size()) != stride * n_seq) bad("block tables do not match");
        for (int32_t b : in.block_tables)
            if (b < 0 || b >= m.blocks) bad("block id " + std::to_string(b) + " outside the cache");
    }
    if (!in.seq_ids.empty() && static_cast<int64_t>(in.seq_ids.size()) != n_seq) bad("seq_ids do not match the sequences");
    if (in.n_seq_decode < 0 || in.n_seq_decode > n_seq) bad(std::to_string(in.n_seq_decode) + " decode sequences of " + std::to_string(n_seq));
    std::vector<int32_t> q_lens(static_cast<size_t>(n_seq)), ctx_lens(static_cast<size_t>(n_seq));
    int32_t max_q = 0, max_ctx = 0;
    for (int64_t s = 0; s < n_seq; ++s) {
        q_lens[s] = in.cu_seqlens[s + 1] - in.cu_seqlens[s];
        // A sequence's tokens sit at consecutive positions that end its context (kernels index the
        // KV cache and the block table by position): anything else would write outside them.
        const int32_t first = in.positions[in.cu_seqlens[s]];
        if (first < 0 || static_cast<int64_t>(first) + q_lens[s] > m.opts.max_ctx)
            bad("sequence " + std::to_string(s) + " reaches position " + std::to_string(static_cast<int64_t>(first) + q_lens[s] - 1) +
                ": a context longer than the plan's " + std::to_string(m.opts.max_ctx) + " (or a negative position)");
        for (int32_t i = 1; i < q_lens[s]; ++i)
            if (in.positions[in.cu_seqlens[s] + i] != first + i)
                bad("sequence " + std::to_string(s) + "'s positions do not run on one at a time from " + std::to_string(first));
        ctx_lens[s] = first + q_lens[s];
        if (s < in.n_seq_decode && q_lens[s] != 1) bad("decode sequence " + std::to_string(s) + " has more than one token");
        if (stride > 0 && (ctx_lens[s] + m.block - 1) / m.block > stride) bad("sequence " + std::to_string(s) + " outgrows its block table");
        max_q = std::max(max_q, q_lens[s]);
        max_ctx = std::max(max_ctx, ctx_lens[s]);
    }
    RadBatch b{};
    b.struct_size = sizeof b;
    b.n_tok = static_cast<int32_t>(n_tok);
    b.n_seq = static_cast<int32_t>(n_seq);
    b.n_seq_decode = in.n_seq_decode;
    b.phase = in.n_seq_decode == n_seq ? RAD_PHASE_DECODE : in.n_seq_decode == 0 ? RAD_PHASE_PREFILL : RAD_PHASE_MIXED;
    b.n_out = static_cast<int32_t>(in.out_ids.size());
    b.token_ids = in.tokens.data();
    b.positions = in.positions.data();
    b.cu_seqlens = in.cu_seqlens.data();
    b.seq_ids = in.seq_ids.empty() ? nullptr : in.seq_ids.data();
    b.out_ids = in.out_ids.data();
    b.q_lens = q_lens.data();
    b.ctx_lens = ctx_lens.data();
    b.block_tables = in.block_tables.empty() ? nullptr : in.block_tables.data();
    b.block_table_stride = static_cast<int32_t>(stride);
    b.max_q_len = max_q;
    b.max_ctx_len = max_ctx;
    // Which out rows get their token on the card, and by which op: `sample` where some row samples
    // (greedy rows ride along with temperature 0), else `argmax`.
    const size_t n_out = in.out_ids.size(), V = static_cast<size_t>(m.vocab);
    std::vector<uint8_t> picked(n_out, 0);
    int pick_op = -1;
    if (m.dev && draws.size() == n_out) {
        bool any = false, sampled = false;
        for (const CardDraw& d : draws) {
            any |= d.on_card;
            sampled |= d.on_card && d.temperature > 0.0f;
        }
        if (any) pick_op = m.sample_op >= 0 && (sampled || m.argmax_op < 0) ? m.sample_op : m.argmax_op;
        for (size_t i = 0; pick_op >= 0 && i < n_out; ++i)
            picked[i] = draws[i].on_card && (pick_op == m.sample_op || !(draws[i].temperature > 0.0f));
    }
    if (every_row_picked && std::count(picked.begin(), picked.end(), 1) != static_cast<std::ptrdiff_t>(n_out))
        bad("a pipelined step needs every out row's token picked on the card (on_card draws the card's ops can serve)");
    if (fed < 0 || fed > n_tok || fed > m.pickable_next)
        bad(std::to_string(fed) + " rows fed from the previous step, whose first " + std::to_string(m.pickable_next) +
            " out rows were picked on the card");
    // The other slot than the step before's (whose picked ids a fed step reads, and which may
    // still be queued); back to that one if this step fails before it is queued.
    struct SlotFlip {
        Impl& m;
        int prev;
        bool queued = false;
        ~SlotFlip() {
            if (!queued) m.use_slot(prev);
        }
    } flip{m, m.slot};
    if (m.dev) m.use_slot(m.slot ^ 1);
    if (pick_op >= 0 && pick_op == m.sample_op) m.stage_draws(draws, picked);
    int64_t lead_picked = 0;
    while (lead_picked < static_cast<int64_t>(n_out) && picked[static_cast<size_t>(lead_picked)]) ++lead_picked;
    const auto t_stage = Clock::now();
    if (m.dev) m.stage_batch(in, &b);
    m.step_error.clear();
    RadCtx ctx{&kCtxApi, &m};
    if (!m.dev) {
        m.arch->step(&ctx, &b);
        if (!m.step_error.empty()) throw Error("step failed: " + m.step_error);
        const float* lg = reinterpret_cast<const float*>(m.buf_base[m.decl.logits]);
        logits.assign(lg, lg + in.out_ids.size() * static_cast<size_t>(m.vocab));
        m.pickable_next = 0;
        flip.queued = true;
        return picked;
    }
    const size_t n_picked = static_cast<size_t>(std::count(picked.begin(), picked.end(), 1));
    // The pick op and the copy of its ids to the host run after the model's ops, inside a recorded
    // decode graph with them (every row is picked; the host ignores the ids of rows it samples).
    auto pick = [&]() -> bool {
        const auto rows = static_cast<int64_t>(n_out);
        const RadOperandRef lg = rad_brows(m.decl.logits, rows), ids = rad_raw(m.stage_h + m.st_ids.off, RAD_I32, rows);
        const RadOperandRef with_argmax[2] = {lg, ids};
        const RadOperandRef with_sample[4] = {lg, rad_raw2(m.stage_h + m.st_cfg.off, RAD_F32, rows, 4),
                                              rad_raw(m.stage_h + m.st_u.off, RAD_F64, rows), ids};
        const bool by_sample = pick_op == m.sample_op;
        // failures go to step_error, not an exception: a graph may be recording
        auto failed = [&](const std::string& why) {
            if (m.step_error.empty()) m.step_error = why;
            return false;
        };
        if (m.issue(pick_op, by_sample ? with_sample : with_argmax, by_sample ? 4 : 2, rows) != RAD_OK)
            return failed("picking the tokens on the card");
        if (m.dev->copy(m.stage_h + m.st_ids.off, m.stage_d + m.st_ids.off, n_out * 4, RAD_COPY_D2H, m.stream) != RAD_OK)
            return failed(std::string("reading the tokens picked on the card: ") + m.dev->last_error());
        return true;
    };
    const auto t_queue = Clock::now();
    m.run_on_device(&ctx, &b, fed, n_picked ? pick_op : -1, pick);
    const auto* lg_dev = reinterpret_cast<const float*>(m.buf_base[m.decl.logits]);
    if (n_picked == 0 && n_out) {
        m.device_check(m.dev->copy(m.logits_h, lg_dev, n_out * V * 4, RAD_COPY_D2H, m.stream), "reading the logits");
    } else {
        for (size_t i = 0; i < n_out; ++i)
            if (!picked[i])
                m.device_check(m.dev->copy(m.logits_h + i * V, lg_dev + i * V, V * 4, RAD_COPY_D2H, m.stream), "reading the logits");
    }
    m.host_times.prepare_us += micros(t_stage - t_enter);
    m.host_times.stage_us += micros(t_queue - t_stage);
    m.host_times.queue_us += micros(Clock::now() - t_queue);
    flip.queued = true;
    m.pickable_next = lead_picked;
    return picked;
}

// The tokens the card picked for a finished step, from its slot's ids (-1 for rows whose logits
// came back, where `picked` says which).
static void picked_tokens(const int32_t* ids, const std::vector<uint8_t>* picked, size_t n_out, std::vector<int32_t>& tokens) {
    tokens.assign(ids, ids + n_out);
    for (size_t i = 0; picked && i < n_out; ++i)
        if (!(*picked)[i]) tokens[i] = -1;  // its logits came back instead
}

void Engine::step(const StepBatch& in, std::vector<float>& logits, const std::vector<CardDraw>& draws,
                  std::vector<int32_t>& tokens) {
    Impl& m = *impl_;
    if (!m.queued.empty()) throw Error("bad step: pipelined steps are still queued (collect them first)");
    tokens.clear();
    const std::vector<uint8_t> picked = m.queue_step(in, logits, draws, 0, false);
    if (!m.dev) return;
    const auto t_wait = Clock::now();
    m.device_check(m.dev->sync(m.stream), "running the step");
    m.host_times.steps += 1;
    m.host_times.wait_us += micros(Clock::now() - t_wait);
    const size_t n_out = in.out_ids.size(), V = static_cast<size_t>(m.vocab);
    logits.resize(n_out * V);
    for (size_t i = 0; i < n_out; ++i)
        if (!picked[i]) std::memcpy(logits.data() + i * V, m.logits_h + i * V, V * 4);
    if (std::count(picked.begin(), picked.end(), 1))
        picked_tokens(reinterpret_cast<const int32_t*>(m.stage_h + m.st_ids.off), &picked, n_out, tokens);
}

void Engine::enqueue(const StepBatch& in, const std::vector<CardDraw>& draws, int32_t fed) {
    Impl& m = *impl_;
    if (!m.dev) throw Error("bad step: pipelined steps need the plan on a card");
    if (m.queued.size() >= 2) throw Error("bad step: two steps are queued already (collect one first)");
    std::vector<float> none;
    m.queue_step(in, none, draws, fed, true);
    void* mark = m.marks[m.slot];
    if (mark) m.device_check(m.dev->mark_record(mark, m.stream), "marking the end of a queued step");
    m.queued.push_back({m.slot, in.out_ids.size(), mark});
}

size_t Engine::queued_steps() const { return impl_->queued.size(); }

void Engine::collect(std::vector<int32_t>& tokens) {
    Impl& m = *impl_;
    if (m.queued.empty()) throw Error("no queued step to collect");
    const Impl::Queued q = m.queued.front();
    m.queued.pop_front();
    const auto t_wait = Clock::now();
    try {
        m.device_check(q.mark ? m.dev->mark_wait(q.mark) : m.dev->sync(m.stream), "running a queued step");
    } catch (...) {
        m.queued.clear();  // what was queued after it cannot have run either
        m.pickable_next = 0;
        throw;
    }
    m.host_times.steps += 1;
    m.host_times.wait_us += micros(Clock::now() - t_wait);
    picked_tokens(reinterpret_cast<const int32_t*>(m.stage_host + static_cast<uint64_t>(q.slot) * m.stage_bytes + m.st_ids.off),
                  nullptr, q.n_out, tokens);
}

// The sample op's per-row settings and draws into their staging regions (copied with the step's
// inputs); rows not picked on the card take the cheap greedy path.
void Engine::Impl::stage_draws(const std::vector<CardDraw>& draws, const std::vector<uint8_t>& picked) {
    auto* cfg = reinterpret_cast<float*>(stage_h + st_cfg.off);
    auto* u = reinterpret_cast<double*>(stage_h + st_u.off);
    for (size_t i = 0; i < draws.size(); ++i) {
        const CardDraw& d = draws[i];
        const bool on = picked[i] != 0;
        cfg[4 * i + 0] = on ? d.temperature : 0.0f;
        cfg[4 * i + 1] = d.top_p;
        cfg[4 * i + 2] = d.min_p;
        cfg[4 * i + 3] = static_cast<float>(d.top_k);
        u[i] = d.u;
    }
}

// The step's inputs into their fixed regions (block tables padded to the card's stride) and the
// batch pointed at them; run_on_device copies them to the card in one copy.
void Engine::Impl::stage_batch(const StepBatch& in, RadBatch* b) {
    const int64_t n_seq = b->n_seq;
    auto put = [&](const StageRegion& r, const int32_t* src, size_t n) -> const int32_t* {
        auto* dst = reinterpret_cast<int32_t*>(stage_h + r.off);
        if (n) std::memcpy(dst, src, n * 4);
        return dst;
    };
    b->cu_seqlens = put(st_cu, b->cu_seqlens, static_cast<size_t>(n_seq + 1));
    if (b->seq_ids) b->seq_ids = put(st_seq, b->seq_ids, static_cast<size_t>(n_seq));
    b->q_lens = put(st_q, b->q_lens, static_cast<size_t>(n_seq));
    b->ctx_lens = put(st_ctx, b->ctx_lens, static_cast<size_t>(n_seq));
    b->out_ids = put(st_out, b->out_ids, in.out_ids.size());
    b->token_ids = put(st_tokens, b->token_ids, in.tokens.size());
    b->positions = put(st_pos, b->positions, in.positions.size());
    uint64_t end = st_bt.off;
    if (b->block_tables) {
        auto* dst = reinterpret_cast<int32_t*>(stage_h + st_bt.off);
        const int64_t width = table_width(b->max_ctx_len);
        const int64_t used = std::min<int64_t>(in.block_table_stride, width);
        for (int64_t q = 0; q < n_seq; ++q) {  // each row's entries, then zeros to the card's stride
            std::memcpy(dst + q * width, in.block_tables.data() + q * in.block_table_stride, static_cast<size_t>(used) * 4);
            std::memset(dst + q * width + used, 0, static_cast<size_t>(width - used) * 4);
        }
        b->block_tables = dst;
        b->block_table_stride = static_cast<int32_t>(width);
        end += static_cast<uint64_t>(n_seq * width) * 4;
    }
    stage_used = end;  // copied by run_on_device, inside a recorded decode graph
}

// The block tables' width on the card for a step whose longest context is max_ctx: the blocks it
// needs rounded up to a power of two, from 256 positions, at most the plan's. A kernel library
// may size its work by the width (libgpu's decode attention cuts a context into splits by it, and
// with one split it launches no merge), so short contexts do not pay for the plan's longest one;
// recorded decode graphs are keyed by it. RADIANCE_TABLE_WIDTH=plan keeps the plan's width (an A/B
// switch).
int64_t Engine::Impl::table_width(int64_t max_ctx) const {
    static const bool plan_width = [] {
        const char* p = std::getenv("RADIANCE_TABLE_WIDTH");
        return p && std::strcmp(p, "plan") == 0;
    }();
    if (plan_width || block <= 0) return stage_stride;
    const int64_t need = (max_ctx + block - 1) / block;
    int64_t w = (256 + block - 1) / block;
    while (w < need) w *= 2;
    return std::min(w, stage_stride);
}

// Decode steps of one shape are recorded as a graph on their second run and replayed after:
// their launches differ only in the inputs, which sit at the same place every step.
void Engine::Impl::run_on_device(RadCtx* ctx, const RadBatch* b, int64_t fed, int pick_op, const std::function<bool()>& pick) {
    const bool graphable = opts.graphs && b->phase == RAD_PHASE_DECODE && (opts.world_size == 1 || collectives_on_queue);
    if (opts.comm && opts.comm->staging != graph_generation) {  // a new generation of the group: the
        for (auto& [k, g] : graphs)                              // recorded collectives name the old one
            if (g) dev->graph_destroy(g);
        graphs.clear();
        graph_generation = opts.comm->staging;
    }
    // An architecture may skip gathering the output rows when they are every row in order (a
    // decode step's usual case), so that is part of a recorded step's shape too, as is the block
    // tables' width (table_width).
    bool every_row = b->n_out == b->n_tok;
    for (int32_t i = 0; every_row && i < b->n_out; ++i) every_row = b->out_ids[i] == i;
    // RADIANCE_PICK_IN_GRAPH=0 issues the pick op after the graph (an A/B switch)
    static const bool pick_in_graph = [] {
        const char* p = std::getenv("RADIANCE_PICK_IN_GRAPH");
        return !(p && std::strcmp(p, "0") == 0);
    }();
    if (graphable && !pick_in_graph && pick_op >= 0) {
        run_on_device(ctx, b, fed, -1, pick);
        if (!pick()) throw Error("step failed: " + step_error);
        return;
    }
    // The inputs' copy is the recorded graph's first node (its size follows the key's sequences
    // and table width): one launch a step instead of a copy and a launch. RADIANCE_COPY_IN_GRAPH=0
    // queues it before the graph (an A/B switch).
    static const bool copy_in_graph = [] {
        const char* p = std::getenv("RADIANCE_COPY_IN_GRAPH");
        return !(p && std::strcmp(p, "0") == 0);
    }();
    auto copy_inputs = [&] { return dev->copy(stage_d, stage_h, stage_used, RAD_COPY_H2D, stream); };
    // A fed step's first rows take the previous step's picked tokens from its slot on the card,
    // after the inputs' copy (which brought placeholders there).
    auto feed = [&] {
        const uint8_t* prev_ids = stage_dev.data + static_cast<uint64_t>(slot ^ 1) * stage_bytes + st_ids.off;
        if (fed > 0 && dev->copy(stage_d + st_tokens.off, prev_ids, static_cast<uint64_t>(fed) * 4, RAD_COPY_D2D, stream) != RAD_OK &&
            step_error.empty())
            step_error = std::string("feeding the previous step's tokens: ") + dev->last_error();
    };
    const std::array<int64_t, 8> key{b->n_tok, b->n_seq, b->n_out, every_row ? 1 : 0, b->block_table_stride, pick_op, slot, fed};
    auto it = graphable ? graphs.find(key) : graphs.end();
    const bool replay = it != graphs.end() && it->second;
    const bool record = it != graphs.end() && !it->second;  // seen once: record this run
    if (!((replay || record) && copy_in_graph)) device_check(copy_inputs(), "copying the step's inputs");
    if (replay) {
        device_check(dev->graph_launch(it->second, stream), "replaying a decode graph");
        return;
    }
    if (record) device_check(dev->graph_begin(stream), "starting a graph");
    if (record && copy_in_graph && copy_inputs() != RAD_OK && step_error.empty())
        step_error = std::string("copying the step's inputs: ") + dev->last_error();
    if (step_error.empty()) feed();
    if (step_error.empty()) arch->step(ctx, b);
    if (step_error.empty() && pick_op >= 0) pick();  // a failed pick leaves step_error
    if (record) {
        void* g = nullptr;
        int rc = dev->graph_end(stream, &g);
        if (!step_error.empty()) {
            if (g) dev->graph_destroy(g);
            throw Error("step failed: " + step_error);
        }
        device_check(rc, "recording a decode graph");
        it->second = g;
        device_check(dev->graph_launch(g, stream), "replaying a decode graph");
        return;
    }
    if (!step_error.empty()) throw Error("step failed: " + step_error);
    if (graphable) graphs.emplace(key, nullptr);
}

}  // namespace radiance::engine
