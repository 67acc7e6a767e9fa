// engine_issue.cpp: one launch, from an architecture's issue() to a kernel row.
// One job: the operands an architecture names (weights, buffer views, KV planes, the step's raw
// inputs) become tensors at their real addresses (the card's copy where the plan runs on one),
// issue() picks the op's band for the row count, passes its parameters and runs the winning
// row's launch (timed under RADIANCE_PROFILE_OPS, left out under RADIANCE_SKIP_OPS), and the
// RadCtx callbacks an architecture's step() calls lead here. Failures are kept in step_error, not
// thrown: a graph may be recording.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>

#include "engine_impl.h"
#include "radiance/core/status_name.h"

namespace radiance::engine {

using core::status_name;
using detail::elem_bytes;

namespace {

// The ops whose operand 0 is the input rows of the weight at operand 1 (docs/OPS.md): what the
// calibration tap sums. rms_norm_gemm and rms_norm_gemm_swiglu norm their input first, so a
// calibrating plan refuses them (engine.cpp); moe_mlp's experts read rows it gathers itself.
bool projection_op(const std::string& op) { return op == "gemm" || op == "gemm_q" || op == "gemm_swiglu" || op == "gemm_add"; }

}  // namespace

void Engine::Impl::calib_tap(const OpDecl& d, const RadOperandRef* opds, int n_opds, const RadTensor* tensors) {
    if (n_opds < 2 || !projection_op(d.geom.op) || opds[1].kind != RAD_OPND_WEIGHT) return calib->other_op();
    calib->record(decl.weights[static_cast<size_t>(opds[1].handle)].stored_name(), tensors[0]);
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
        if (r.rows > b.d.shape[0])
            return *why = "buffer '" + b.name + "' has " + std::to_string(b.d.shape[0]) + " rows, " + std::to_string(r.rows) + " asked",
                   false;
        const int64_t width = b.d.shape[b.d.rank - 1];
        if (r.col0 < 0 || r.col0 + (r.cols ? r.cols : width) > width) return *why = "view outside buffer '" + b.name + "'", false;
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
        if (it == g.layers.end())
            return *why = "layer " + std::to_string(r.layer) + " is not bound to KV group '" + g.name + "'", false;
        if (r.col0 < 0 || r.col0 >= kv_plane_count(g.d))
            return *why = "KV group '" + g.name + "' (" + rad_dtype_name(g.d.dtype) + ") has no plane " + std::to_string(r.col0) +
                          (r.col0 >= 2 && r.col0 < kMaxKvPlanes ? " (scale planes are an 8-bit cache's)" : ""),
                   false;
        Bytes& p = kv[r.handle][static_cast<size_t>(it - g.layers.begin())][static_cast<size_t>(r.col0)];
        t->data = p.data;
        t->dtype = kv_plane_dtype(g.d, static_cast<int>(r.col0));
        t->rank = r.col0 < 2 ? 4 : 3;  // the codes [blocks, block, heads, head_dim]; a scale a (token, head)
        t->shape[0] = blocks;
        t->shape[1] = block;
        t->shape[2] = g.d.n_head_kv;
        if (r.col0 < 2) t->shape[3] = g.d.head_dim;
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
    if (calib && !calib->done()) {  // before the launch: x as the weight reads it
        try {
            calib_tap(d, opds, n_opds, tensors);
        } catch (const std::exception& e) {
            return fail(where + ": " + e.what(), RAD_E_INTERNAL);
        }
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
        return fail(where + " failed in kernel " + band.row->lib->plugin->name + ":" + band.row->info->name + " with " + status_name(rc),
                    rc);
    return RAD_OK;
}

Engine::Impl& Engine::Impl::of(RadCtx* c) { return *static_cast<Impl*>(c->impl); }
int Engine::Impl::ctx_issue(RadCtx* c, rad_op op, const RadOperandRef* opds, int n, int64_t rows) { return of(c).issue(op, opds, n, rows); }
void Engine::Impl::ctx_fail(RadCtx* c, const char* what) {
    auto& i = of(c);
    if (i.step_error.empty()) i.step_error = what ? what : "step failed";
}
int Engine::Impl::ctx_status(RadCtx* c) { return of(c).step_error.empty() ? RAD_OK : RAD_E_INTERNAL; }

const RadCtxApi Engine::Impl::kCtxApi = {sizeof(RadCtxApi), ctx_issue, ctx_fail, ctx_status, {}};

}  // namespace radiance::engine
