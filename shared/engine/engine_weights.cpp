// engine_weights.cpp: the model's weights as the kernels read them.
// One job: each declared weight is found in the container, checked against the architecture's
// shape and encoding, used in place from the mapping where its stored form is what the kernels
// read, widened where the declaration asks for f32, sliced to this rank's share under tensor
// parallelism, and on a card uploaded into one allocation. Kept apart because it is the only part
// of the plan that reads the container's tensor data.
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "engine_impl.h"
#include "radiance/util/error.h"

namespace radiance::engine {

using detail::elem_bytes;
using detail::tensor_bytes;

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
                errors.push_back("weight '" + w.name + "'" + (w.source.empty() ? "" : " (stored as '" + w.source + "')") + " is not in " +
                                 model->path());
            continue;
        }
        const RadEncoding& enc = model->encodings()[ti->encoding];
        if (std::strcmp(enc.scheme, "plain") != 0 || enc.n_planes != 1) {
            errors.push_back("weight '" + w.name + "' is stored in encoding '" + enc.scheme + "', which no kernel of this plan reads");
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
        if (total != t->shape[0])
            return *why = "row parts add up to " + std::to_string(total) + ", not " + std::to_string(t->shape[0]), false;
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

}  // namespace radiance::engine
