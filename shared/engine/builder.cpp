// builder.cpp: RadBuilderApi over a Declaration.
#include "radiance/engine/builder.h"

#include <string_view>

#include "radiance/rad_kv_fp8.h"

#include "radiance/util/error.h"
#include "radiance/util/log.h"

namespace radiance::engine {
namespace {

struct State {
    Declaration decl;
    const core::Registry* reg;
    const DeclareOptions* opts;
    std::string plugin;
};

State& st(RadBuilder* b) { return *static_cast<State*>(b->impl); }

template <typename T>
bool valid(const std::vector<T>& v, int32_t h) {
    return h >= 0 && static_cast<size_t>(h) < v.size();
}

void fail(RadBuilder* b, const char* why) {
    State& s = st(b);
    if (s.decl.failure.empty()) s.decl.failure = why ? why : "declare failed";
}

rad_weight decl_weight(RadBuilder* b, const char* name, const RadWeightDecl* d) {
    State& s = st(b);
    if (!name || !d || d->rank < 1 || d->rank > RAD_MAX_RANK) {
        fail(b, ("malformed weight declaration '" + std::string(name ? name : "?") + "'").c_str());
        return RAD_NULL_HANDLE;
    }
    for (auto& w : s.decl.weights)
        if (w.name == name) {
            fail(b, ("weight '" + std::string(name) + "' declared twice").c_str());
            return RAD_NULL_HANDLE;
        }
    WeightDecl w;
    w.name = name;
    w.d = *d;
    if (d->row_parts && d->n_row_parts > 0) w.row_parts.assign(d->row_parts, d->row_parts + d->n_row_parts);
    w.source = d->source ? d->source : "";
    w.planes = d->planes ? d->planes : "";
    w.d.row_parts = nullptr;  // the copies above own these
    w.d.source = nullptr;
    w.d.planes = nullptr;
    s.decl.weights.push_back(std::move(w));
    return static_cast<rad_weight>(s.decl.weights.size() - 1);
}

rad_buf decl_buffer(RadBuilder* b, const char* name, const RadBufDecl* d) {
    State& s = st(b);
    if (!name || !d || d->rank < 1 || d->rank > RAD_MAX_RANK || rad_dtype_bits(d->dtype) < 8) {
        fail(b, ("malformed buffer declaration '" + std::string(name ? name : "?") + "'").c_str());
        return RAD_NULL_HANDLE;
    }
    BufferDecl bd;
    bd.name = name;
    bd.d = *d;
    bd.derive = d->derive ? d->derive : "";
    bd.d.derive = nullptr;
    s.decl.buffers.push_back(std::move(bd));
    return static_cast<rad_buf>(s.decl.buffers.size() - 1);
}

rad_kv decl_kv_group(RadBuilder* b, const char* name, const RadKvGroupDecl* d) {
    State& s = st(b);
    if (!name || !d || d->head_dim <= 0 || d->n_head_kv < 0) {
        fail(b, "malformed KV group declaration");
        return RAD_NULL_HANDLE;
    }
    KvGroupDecl g;
    g.name = name;
    g.d = *d;
    s.decl.kv_groups.push_back(std::move(g));
    return static_cast<rad_kv>(s.decl.kv_groups.size() - 1);
}

int bind_layer_kv(RadBuilder* b, rad_kv kv, int layer) {
    State& s = st(b);
    if (!valid(s.decl.kv_groups, kv)) return RAD_E_ARG;
    s.decl.kv_groups[kv].layers.push_back(layer);
    return RAD_OK;
}

rad_op decl_op(RadBuilder* b, const char* op, const RadParamDecl* params, int n_params, const rad_weight* weights, int n_weights) {
    State& s = st(b);
    OpDecl d;
    d.geom.op = op ? op : "";
    for (int i = 0; i < n_params; ++i) {
        const RadParamDecl& p = params[i];
        if (!p.name) continue;
        if (p.ranged) {
            if (!d.geom.ranged.empty()) {
                fail(b, ("op '" + d.geom.op + "' declares two ranged parameters").c_str());
                return RAD_NULL_HANDLE;
            }
            d.geom.ranged = p.name;
            d.geom.lo = p.i;
            d.geom.hi = p.hi;
        } else if (p.type == RAD_P_INT) {
            d.geom.params[p.name] = core::ParamValue::of_int(p.i);
        } else if (p.type == RAD_P_F64) {
            d.geom.params[p.name] = core::ParamValue::of_f64(p.f);
        } else {
            d.geom.params[p.name] = core::ParamValue::of_str(p.s ? p.s : "");
        }
    }
    for (int i = 0; i < n_weights; ++i) d.weights.push_back(weights[i]);
    // An architecture written before attention had `kv_dtype` does not pass it; its cache is the
    // deployment's (RadBuildCtx.kv_dtype), so that is what its rows will read. Filling it in keeps
    // such a plugin resolving on rows that constrain it (a card's, which decline fp8). With an fp8
    // cache it would not pass the scale planes either: that is refused here, by name, rather than
    // by every step's launch.
    const RadOpSchema* schema = s.reg->schema(d.geom.op);
    const int kv_dt = s.opts->ctx.kv_dtype;
    if (schema && kv_dt && !d.geom.params.count("kv_dtype"))
        for (int i = 0; i < schema->n_params; ++i) {
            if (std::string_view(schema->params[i].name) != "kv_dtype") continue;
            if (rad_kv_has_scales(kv_dt)) {
                fail(b, ("op '" + d.geom.op + "' is declared without kv_dtype: the architecture predates the " + rad_dtype_name(kv_dt) +
                         " KV cache and passes no scale planes (rebuild it against this release, or serve another --kv-cache-dtype)")
                            .c_str());
                return RAD_NULL_HANDLE;
            }
            d.geom.params["kv_dtype"] = core::ParamValue::of_str(rad_dtype_name(kv_dt));
        }
    d.res = core::resolve(*s.reg, d.geom, s.opts->select);
    s.decl.ops.push_back(std::move(d));
    return static_cast<rad_op>(s.decl.ops.size() - 1);
}

void mark_use(State& s, rad_op op, const rad_buf* bufs, int n) {
    for (int i = 0; i < n; ++i) {
        if (!valid(s.decl.buffers, bufs[i])) continue;
        BufferDecl& bd = s.decl.buffers[bufs[i]];
        if (bd.first_use < 0 || op < bd.first_use) bd.first_use = op;
        if (op > bd.last_use) bd.last_use = op;
    }
}
void op_reads(RadBuilder* b, rad_op op, const rad_buf* bufs, int n) { mark_use(st(b), op, bufs, n); }
void op_writes(RadBuilder* b, rad_op op, const rad_buf* bufs, int n) { mark_use(st(b), op, bufs, n); }

int op_resolved(RadBuilder* b, rad_op op) {
    State& s = st(b);
    if (!valid(s.decl.ops, op)) return 0;
    s.decl.ops[op].queried = true;
    return s.decl.ops[op].res.ok() ? 1 : 0;
}

int op_declared(RadBuilder* b, const char* op) { return op && st(b).reg->schema(op) ? 1 : 0; }

int name_map(RadBuilder* b, const RadNameMapEntry* e, int n) {
    State& s = st(b);
    for (int i = 0; i < n; ++i) {
        NameMapEntry m;
        m.target = e[i].target ? e[i].target : "";
        m.kind = e[i].kind;
        for (int k = 0; k < e[i].n_sources; ++k) m.sources.emplace_back(e[i].sources[k]);
        s.decl.name_map.push_back(std::move(m));
    }
    return RAD_OK;
}

void declare_logits(RadBuilder* b, rad_buf buf) { st(b).decl.logits = buf; }
void declare_pooled(RadBuilder* b, rad_buf buf) { st(b).decl.pooled = buf; }
void note(RadBuilder* b, const char* text) { st(b).decl.notes.emplace_back(text ? text : ""); }

// The block size comes from the attention kernel that won: its derived `block` parameter.
int kv_block_size(RadBuilder* b, rad_kv) {
    for (auto& op : st(b).decl.ops)
        for (auto& band : op.res.bands)
            if (auto it = band.derived.find("block"); it != band.derived.end()) return static_cast<int>(it->second);
    return 0;
}

int weight_encoding(RadBuilder* b, rad_weight w, RadEncoding* out) {
    State& s = st(b);
    if (!valid(s.decl.weights, w) || !s.opts->encoding) return RAD_E_ARG;
    auto e = s.opts->encoding(s.decl.weights[w].stored_name(), s.decl.name_map);
    if (!e) return RAD_E_UNSUPPORTED;
    *out = *e;
    return RAD_OK;
}

const RadBuilderApi kApi = {
    sizeof(RadBuilderApi), decl_weight, decl_buffer, decl_kv_group,  bind_layer_kv, decl_op, op_reads,      op_writes,
    op_resolved,           op_declared, name_map,    declare_logits, note,          fail,    kv_block_size, weight_encoding,
    declare_pooled,        {}};

}  // namespace

const WeightDecl* Declaration::weight(const std::string& name) const {
    for (auto& w : weights)
        if (w.name == name) return &w;
    return nullptr;
}

Declaration declare(const core::ArchPlugin& arch, const core::Registry& reg, const ModelMeta& meta, const DeclareOptions& opts) {
    State s{Declaration{}, &reg, &opts, arch.plugin->name};
    RadBuilder b{&kApi, &s};
    RadBuildCtx ctx = opts.ctx;
    ctx.struct_size = sizeof ctx;
    int rc = arch.declare(&b, meta.get(), &ctx);
    if (rc != RAD_OK && s.decl.failure.empty()) s.decl.failure = "declare returned status " + std::to_string(rc);
    if (!s.decl.failure.empty())
        throw Error("architecture plugin '" + arch.plugin->name + "' failed to declare the model: " + s.decl.failure);
    for (auto& n : s.decl.notes) log::debug(arch.plugin->name, ": ", n);
    return std::move(s.decl);
}

}  // namespace radiance::engine
