// engine_weights.cpp: the model's weights as the kernels read them.
// One job: each declared weight is found in the container, checked against the architecture's
// shape and encoding, used in place from the mapping where its stored form is what the kernels
// read, widened where the declaration asks for f32, sliced to this rank's share under tensor
// parallelism, and on a card uploaded into one allocation. Kept apart because it is the only part
// of the plan that reads the container's tensor data.
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <radiance/rad_decode.h>

#include "engine_impl.h"
#include "radiance/util/error.h"

namespace radiance::engine {

using detail::elem_bytes;
using detail::tensor_bytes;

namespace {

std::string encoding_str(const RadEncoding& e) {
    std::string out = std::string("'") + e.scheme + "' (";
    for (int k = 0; k < e.n_planes; ++k) out += std::string(k ? ", " : "") + e.planes[k].role + " " + rad_dtype_name(e.planes[k].dtype);
    return out + ")";
}

// Why a view of the perm transform's table (GPTQ act-order: stored column j is the weight's column
// perm[j]) cannot be served, or "": it must be the table rad_encoding.h describes, hold each column
// once (the kernels only check a value's range, so a repeated column would compute another weight
// silently), and not be split by columns (a rank's slice of x is in the weight's order, while the
// table orders the whole stored row; rad_block_linear.h refuses that at declare too).
std::string perm_problem(const RadEncoding& enc, int64_t cols, const void* table, bool col_split) {
    int k = -1;
    if (rad_perm_plane(&enc, cols, &k) != RAD_OK || k < 0)
        return "its table 't.perm' is not the perm transform's i32 [1 x " + std::to_string(cols) + "]";
    if (rad_perm_check(table, cols) != RAD_OK)
        return "its table 't.perm' is not a permutation of its " + std::to_string(cols) + " columns (a value out of range or repeated)";
    if (col_split) return "its columns are stored permuted (the perm transform), which a split by columns over ranks cannot serve";
    return "";
}

}  // namespace

// A weight declared with `planes` (a view: one plane of a stored weight, as a quantised gemm takes
// its codes and scales as operands) is that plane, in place: its own dtype and extent ([plane rows,
// plane cols] of a TILED plane, the table's of a TABLE). Any other weight must be stored plain.
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
        const bool plain = std::strcmp(enc.scheme, "plain") == 0 && enc.n_planes == 1;
        int plane = 0;
        if (!w.planes.empty()) {
            plane = rad_encoding_plane(&enc, w.planes.c_str());
            if (plane < 0) {
                errors.push_back("weight '" + w.name + "' views plane '" + w.planes + "' of '" + w.stored_name() +
                                 "', stored in encoding " + encoding_str(enc) + ", which has none");
                continue;
            }
        } else if (!plain) {
            errors.push_back("weight '" + w.name + "' is stored in encoding " + encoding_str(enc) + ", which the architecture '" +
                             arch->plugin->name +
                             "' reads as one plain plane (a plugin of the container's quant descriptor reads it plane by plane)");
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
        const RadPlaneDesc& pd = enc.planes[plane];
        const int stored = pd.dtype;
        t.dtype = stored;
        t.data = const_cast<uint8_t*>(model->plane_data(*ti, static_cast<size_t>(plane)));  // read in place from the mapping
        if (w.planes == "t.perm") {
            const std::string why = perm_problem(enc, ti->cols(), t.data, opts.world_size > 1 && w.d.shard == RAD_SHARD_COL);
            if (!why.empty()) {
                errors.push_back("weight '" + w.stored_name() + "' in " + model->path() + ": " + why);
                continue;
            }
        }
        if (plain) {
            t.rank = w.d.rank;
            for (int d = 0; d < w.d.rank; ++d) t.shape[d] = w.d.shape[d];
        } else {
            int64_t pr = 0, pc = 0;
            rad_plane_extent(&pd, ti->rows(), ti->cols(), &pr, &pc);
            t.rank = 2;
            t.shape[0] = pr;
            t.shape[1] = pc;
        }
        if (opts.world_size > 1 && w.d.shard != RAD_SHARD_NONE) {
            std::string why;
            const bool ok =
                plain ? slice_weight(w, &t, &widened[i], &why) : slice_plane(w, pd, ti->rows(), ti->cols(), &t, &widened[i], &why);
            if (!ok) {
                errors.push_back("weight '" + w.name + "': " + why);
                continue;
            }
        }
        if (w.d.dtype != RAD_DT_NONE && w.d.dtype != stored) {
            bool widen = plain && w.d.dtype == RAD_F32 && (stored == RAD_BF16 || stored == RAD_F16);
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

// The rows of a ROW-sharded weight this rank owns, as [begin, end) spans of the whole weight in
// order: a span of every stacked part (a rank owns a slice of q, of k and of v, never a contiguous
// slice of the stack). Spans are [r * P / W, (r + 1) * P / W), so widths that do not divide give
// uneven spans; parts of whole units (heads) split by units, or replicate when the part has fewer
// units than ranks (RadWeightDecl.row_unit).
bool Engine::Impl::row_spans(const WeightDecl& w, int64_t total_rows, std::vector<std::pair<int64_t, int64_t>>* spans, std::string* why) {
    const int64_t W = opts.world_size, r = opts.rank;
    const int64_t unit = w.d.row_unit;
    std::vector<int64_t> parts = w.row_parts.empty() ? std::vector<int64_t>{total_rows} : w.row_parts;
    int64_t base = 0;
    for (int64_t P : parts) {
        int64_t a = r * P / W, b = (r + 1) * P / W;
        if (unit > 0) {
            const int64_t U = P / unit;
            if (U * unit != P)
                return *why = "a part of " + std::to_string(P) + " rows is not whole units of " + std::to_string(unit), false;
            if (U >= W) {
                a = r * U / W * unit;
                b = (r + 1) * U / W * unit;
            } else if (W % U) {
                return *why = "a part of " + std::to_string(U) + " units cannot be replicated evenly over " + std::to_string(W) + " ranks",
                       false;
            } else {
                const int64_t u = r * U / W;
                a = u * unit;
                b = (u + 1) * unit;
            }
        }
        spans->emplace_back(base + a, base + b);
        base += P;
    }
    if (base != total_rows) return *why = "row parts add up to " + std::to_string(base) + ", not " + std::to_string(total_rows), false;
    return true;
}

// This rank's slice of a sharded weight: ROW takes its row spans, COL a span of columns.
bool Engine::Impl::slice_weight(const WeightDecl& w, RadTensor* t, Bytes* owned, std::string* why) {
    const int64_t W = opts.world_size, r = opts.rank;
    const uint64_t es = elem_bytes(t->dtype);
    if (!es) return *why = "cannot slice a sub-byte encoding", false;
    const auto* src = static_cast<const uint8_t*>(t->data);
    if (w.d.shard == RAD_SHARD_ROW) {
        uint64_t row_bytes = es;
        for (int d = 1; d < t->rank; ++d) row_bytes *= static_cast<uint64_t>(t->shape[d]);
        std::vector<std::pair<int64_t, int64_t>> spans;
        if (!row_spans(w, t->shape[0], &spans, why)) return false;
        int64_t local = 0;
        for (auto [a, b] : spans) local += b - a;
        owned->alloc(static_cast<uint64_t>(local) * row_bytes);
        uint64_t off = 0;
        for (auto [a, b] : spans) {
            std::memcpy(owned->data + off, src + static_cast<uint64_t>(a) * row_bytes, static_cast<uint64_t>(b - a) * row_bytes);
            off += static_cast<uint64_t>(b - a) * row_bytes;
        }
        t->shape[0] = local;
    } else {
        if (t->rank != 2) return *why = "a column split needs a 2-D weight", false;
        const int64_t a = r * t->shape[1] / W, b = (r + 1) * t->shape[1] / W;
        owned->alloc(static_cast<uint64_t>(t->shape[0] * (b - a)) * es);
        for (int64_t i = 0; i < t->shape[0]; ++i)
            std::memcpy(owned->data + static_cast<uint64_t>(i * (b - a)) * es, src + static_cast<uint64_t>(i * t->shape[1] + a) * es,
                        static_cast<uint64_t>(b - a) * es);
        t->shape[1] = b - a;
    }
    t->data = owned->data;
    return true;
}

// This rank's slice of one plane of a sharded [rows x cols] weight: the rank's spans of the weight
// mapped onto the plane's elements, each covering [block_r x block_c] values. A span must start on
// an element's edge (a group of columns, a block of rows) and, for sub-byte elements, on a byte;
// an element covering the whole extent (a per-row scale under a column split) and a table are
// carried whole by every rank.
bool Engine::Impl::slice_plane(const WeightDecl& w, const RadPlaneDesc& p, int64_t rows, int64_t cols, RadTensor* t, Bytes* owned,
                               std::string* why) {
    if (p.kind == RAD_PLANE_TABLE) return true;
    const int64_t W = opts.world_size, r = opts.rank;
    const int bits = rad_dtype_bits(p.dtype);
    const int64_t prows = t->shape[0], pcols = t->shape[1];
    const uint64_t pitch = rad_row_bytes(p.dtype, static_cast<uint64_t>(pcols));
    const auto* src = static_cast<const uint8_t*>(t->data);
    auto to_plane = [&](int64_t a, int64_t b, int64_t block, int64_t extent, const char* what, std::pair<int64_t, int64_t>* out) {
        if (block == 0) return *out = {0, 1}, true;  // one element covers the whole extent: every rank keeps it
        if (a % block != 0 || (b % block != 0 && b != extent)) {
            *why = std::string("its ") + what + " span [" + std::to_string(a) + ", " + std::to_string(b) +
                   ") does not start and end on plane '" + p.role + "''s blocks of " + std::to_string(block);
            return false;
        }
        *out = {a / block, (b + block - 1) / block};
        return true;
    };
    if (w.d.shard == RAD_SHARD_ROW) {
        std::vector<std::pair<int64_t, int64_t>> spans, prow_spans;
        if (!row_spans(w, rows, &spans, why)) return false;
        for (auto [a, b] : spans) {
            std::pair<int64_t, int64_t> ps;
            if (!to_plane(a, b, p.block_r, rows, "row", &ps)) return false;
            if (p.block_r == 0) {  // the same element for every span: once
                prow_spans = {ps};
                break;
            }
            prow_spans.push_back(ps);
        }
        int64_t local = 0;
        for (auto [a, b] : prow_spans) local += b - a;
        owned->alloc(static_cast<uint64_t>(local) * pitch);
        uint64_t off = 0;
        for (auto [a, b] : prow_spans) {
            std::memcpy(owned->data + off, src + static_cast<uint64_t>(a) * pitch, static_cast<uint64_t>(b - a) * pitch);
            off += static_cast<uint64_t>(b - a) * pitch;
        }
        t->shape[0] = local;
    } else {
        std::pair<int64_t, int64_t> ps;
        if (!to_plane(r * cols / W, (r + 1) * cols / W, p.block_c, cols, "column", &ps)) return false;
        const uint64_t first = static_cast<uint64_t>(ps.first) * static_cast<uint64_t>(bits) / 8;
        const uint64_t local_pitch = rad_row_bytes(p.dtype, static_cast<uint64_t>(ps.second - ps.first));
        owned->alloc(static_cast<uint64_t>(prows) * local_pitch);
        std::memset(owned->data, 0, static_cast<uint64_t>(prows) * local_pitch);
        if ((static_cast<uint64_t>(ps.first) * static_cast<uint64_t>(bits)) % 8 == 0) {
            for (int64_t i = 0; i < prows; ++i) std::memcpy(owned->data + i * local_pitch, src + i * pitch + first, local_pitch);
        } else {  // sub-byte elements starting inside a byte: each row's bit stream restarts on a byte
            for (int64_t i = 0; i < prows; ++i)
                for (int64_t j = ps.first; j < ps.second; ++j)
                    rad_plane_store_bits(p.dtype, owned->data + i * local_pitch, j - ps.first, rad_plane_bits(p.dtype, src + i * pitch, j));
        }
        t->shape[1] = ps.second - ps.first;
    }
    t->data = owned->data;
    return true;
}

// Each weight's offset in one allocation, in declaration order, in steps of `align` bytes, and the
// allocation's size. A weight whose bytes an earlier one already holds (the same stored bytes read
// in place, unsliced: a tied head viewing the embedding's table) shares its place instead of
// holding a second copy; `own[i]` is 1 where weight i has a place of its own.
uint64_t Engine::Impl::place_weights(uint64_t align, std::vector<uint64_t>* off, std::vector<char>* own) const {
    uint64_t total = 0;
    off->assign(weights.size(), 0);
    own->assign(weights.size(), 0);
    std::map<std::pair<const void*, uint64_t>, uint64_t> placed;
    for (size_t i = 0; i < weights.size(); ++i) {
        if (!weights[i].data) continue;
        const uint64_t bytes = tensor_bytes(weights[i]);
        auto [at, fresh] = placed.try_emplace({weights[i].data, bytes}, total);
        (*off)[i] = at->second;
        if (!fresh) continue;
        (*own)[i] = 1;
        total += (bytes + align - 1) / align * align;
    }
    return total;
}

// Every weight in one allocation on the card, 256-byte aligned (place_weights).
void Engine::Impl::upload_weights() {
    std::vector<uint64_t> off;
    std::vector<char> own;
    const uint64_t total = place_weights(256, &off, &own);
    weights_dev.alloc_on(dev, total, "weights");
    weight_total = total;
    for (size_t i = 0; i < weights.size(); ++i) {
        if (!weights[i].data) continue;
        if (own[i])
            device_check(dev->copy(weights_dev.data + off[i], weights[i].data, tensor_bytes(weights[i]), RAD_COPY_H2D, stream),
                         ("copying weight '" + decl.weights[i].name + "'").c_str());
        weights[i].data = weights_dev.data + off[i];
    }
    device_check(dev->sync(stream), "copying the weights");
    widened.clear();  // the host copies of sliced or widened weights are no longer read
}

}  // namespace radiance::engine
