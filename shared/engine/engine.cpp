// engine.cpp: create() runs the plan in its order (declare, resolve, weights, buffers, KV,
// staging, kernel state); teardown and the small accessors. Each job of the plan and the step has
// a file of its own (engine_impl.h lists them); this one only says in which order they run.
#include "radiance/engine/engine.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>

#include "deterministic.h"
#include "engine_impl.h"
#include "radiance/engine/builder.h"
#include "radiance/engine/model_meta.h"
#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::engine {


std::map<std::string, std::string> meta_from_container(const container::Reader& r) {
    std::map<std::string, std::string> kv;
    for (auto& [k, v] : r.meta()) kv[k] = v.to_string();
    return kv;
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
    if (pooled_h) dev->release_host(pooled_h);
    if (stream) dev->stream_destroy(stream);
}

Engine::Engine() : impl_(std::make_unique<Impl>()) {}
Engine::~Engine() {
    if (!impl_) return;
    if (impl_->calib && !impl_->calib->done() && impl_->calib->any()) {  // a serve run that ended before the limit
        try {
            impl_->calib->finish();
        } catch (const std::exception& e) {
            log::error(e.what());
        }
    }
    for (auto& op : impl_->ops)
        for (auto& b : op.bands)
            if (b.instance && b.row && b.row->info->fini) b.row->info->fini(b.instance);
}

std::unique_ptr<Engine> Engine::create(std::shared_ptr<const core::Registry> registry, std::shared_ptr<const container::Reader> model,
                                       const EngineOptions& opts) {
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
    std::string calib_dir = opts.calib_dir;
    int64_t calib_limit = opts.calib_tokens;
    if (const char* p = std::getenv("RADIANCE_CALIB_DIR"); calib_dir.empty() && p && *p) calib_dir = p;
    if (!calib_dir.empty()) {
        if (const char* p = std::getenv("RADIANCE_CALIB_TOKENS"); calib_limit <= 0 && p && *p) {
            char* end = nullptr;
            calib_limit = std::strtoll(p, &end, 10);
            if (*end || calib_limit <= 0) throw Error(std::string("RADIANCE_CALIB_TOKENS=") + p + " is not a positive number of tokens");
        }
        if (calib_limit <= 0) calib_limit = 65536;
        if (opts.world_size != 1)
            throw Error("the calibration tap (RADIANCE_CALIB_DIR " + calib_dir + ") runs on one rank; this plan has " +
                        std::to_string(opts.world_size));
        // the fusions that norm a projection's input inside the op: their unfused chains instead
        d.select.refused_ops.insert({"rms_norm_gemm", "rms_norm_gemm_swiglu"});
    }
    m.plan_device(reg);
    apply_deterministic(reg, opts.deterministic, m.dev);  // before the plan: a library's scratch may depend on it
    if (!calib_dir.empty()) {
        if (m.dev)
            throw Error("the calibration tap (RADIANCE_CALIB_DIR " + calib_dir + ") reads activations on the host, and this plan runs on " +
                        m.dev->name + ": run it with --placement host");
        m.calib = std::make_unique<CalibTap>(calib_dir, calib_limit);
    }
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
    if (opts.kv_dtype) {
        // The caches the kernel libraries may read; an fp8 one is e4m3 with scales (rad_kv_fp8.h).
        if (opts.kv_dtype != RAD_F32 && opts.kv_dtype != RAD_BF16 && opts.kv_dtype != RAD_F16 && opts.kv_dtype != RAD_FP8_E4M3)
            throw Error(std::string("a KV cache of ") + rad_dtype_name(opts.kv_dtype) + " is not served (f32, bf16, f16, fp8_e4m3)");
        d.ctx.kv_dtype = opts.kv_dtype;
    }
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
    if (m.decl.pooled != RAD_NULL_HANDLE) {
        const BufferDecl& pd = m.decl.buffers[m.decl.pooled];
        if (pd.d.rank != 2) throw Error("the pooled buffer must be [rows, n_embd]");
        m.pooled_cap = pd.d.shape[0];
        m.pooled_width = pd.d.shape[1];
    }
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
        // Structured output's masks go with the pick where its schema has the operand (rad_ops.h);
        // a library fixing an older schema leaves constrained rows to the host sampler.
        auto takes_mask = [&](const char* op) {
            const RadOpSchema* s = reg.schema(op);
            for (int32_t i = 0; s && i < s->n_operands; ++i)
                if (std::string(s->operands[i].name) == "mask") return true;
            return false;
        };
        m.pick_mask = (m.argmax_op >= 0 || m.sample_op >= 0) && (m.argmax_op < 0 || takes_mask("argmax")) &&
                      (m.sample_op < 0 || takes_mask("sample"));
    }
    m.plan_ops();
    m.plan_weights();
    if (m.dev) {
        m.upload_weights();
    } else {  // read in place: the bytes counted once however many weights view them
        std::vector<uint64_t> off;
        std::vector<char> own;
        m.weight_total = m.place_weights(1, &off, &own);
    }
    m.plan_buffers();
    m.plan_kv();
    if (m.dev) m.plan_staging();
    m.plan_kernel_state();
    if (m.dev) m.device_check(m.dev->sync(m.stream), "finishing the plan");
    log::info("planned ", m.arch->plugin->name, " on ", e->placement(), ": ", m.decl.ops.size(), " ops, ", m.decl.weights.size(),
              " weights (", m.weight_total, " bytes), arena ", m.arena.size, " bytes, KV ", m.kv_total, " bytes (", m.blocks, " blocks of ",
              m.block, m.decl.kv_groups.empty() ? "" : std::string(", ") + rad_dtype_name(m.decl.kv_groups[0].d.dtype), ")");
    return e;
}

int Engine::kv_block_size() const { return impl_->block; }
int64_t Engine::kv_blocks() const { return impl_->blocks; }

int kv_dtype_of(const std::string& name) {
    if (name.empty()) return 0;
    if (name == "f32") return RAD_F32;
    if (name == "bf16") return RAD_BF16;
    if (name == "fp8_e4m3") return RAD_FP8_E4M3;
    throw Error("KV cache dtype '" + name + "' is not one of f32, bf16, fp8_e4m3");
}
int64_t Engine::vocab() const { return impl_->vocab; }
bool Engine::sample_on_card() const { return impl_->sample_op >= 0; }
bool Engine::greedy_on_card() const { return impl_->argmax_op >= 0 || impl_->sample_op >= 0; }
bool Engine::mask_on_card() const { return impl_->pick_mask; }
Engine::HostTimes Engine::host_times() const { return impl_->host_times; }
void Engine::reset_host_times() { impl_->host_times = {}; }
int64_t Engine::max_out_rows() const { return impl_->max_out; }
int64_t Engine::hidden_width() const { return impl_->pooled_width; }
int64_t Engine::max_hidden_rows() const { return impl_->pooled_cap; }
const std::vector<float>& Engine::hidden_rows() const { return impl_->hidden_last; }
const Declaration& Engine::declaration() const { return impl_->decl; }
uint64_t Engine::arena_bytes() const { return impl_->arena.size; }
uint64_t Engine::kv_bytes() const { return impl_->kv_total; }
uint64_t Engine::weight_bytes() const { return impl_->weight_total; }
std::string Engine::placement() const {
    if (!impl_->dev) return "host";
    return std::string(impl_->dev->runtime) + " " + impl_->dev->name;
}

void Engine::finish_calibration() {
    if (impl_->calib) impl_->calib->finish();
}

std::string Engine::selection_report() const {
    std::string out;
    for (auto& op : impl_->decl.ops) out += core::explain(op.res);
    return out;
}

}  // namespace radiance::engine
