// quantize_weight.cpp: the quantiser contract (rad_quant.h) driven for one weight.
#include "radiance/convert/quantize_weight.h"

#include <radiance/rad_decode.h>

#include <algorithm>
#include <cmath>

#include "radiance/core/status_name.h"
#include "radiance/util/error.h"

namespace radiance::convert {
namespace {

using core::status_name;

// Rows of a plane that rows [r0, r0 + n) of the weight cover, and the plane's bytes a row.
struct PlaneGeom {
    int64_t br = 1;  // weight rows one plane row covers (TILED); 0 for a TABLE
    uint64_t pitch = 0, bytes = 0;
};

}  // namespace

WeightError quantize_weight(const std::string& name, const std::vector<int64_t>& shape, int logical_dtype, const WeightValues& v,
                            const WeightPlan& plan, container::Writer& w) {
    const RadEncoding& enc = plan.enc;
    const int64_t rows = v.rows, cols = v.cols;
    const std::string who = "weight '" + name + "' (quantiser '" + plan.q->name + "')";
    std::vector<PlaneGeom> g(static_cast<size_t>(enc.n_planes));
    for (int k = 0; k < enc.n_planes; ++k) {
        const RadPlaneDesc& p = enc.planes[k];
        int64_t pr = 0, pc = 0;
        if (rad_plane_extent(&p, rows, cols, &pr, &pc) != RAD_OK) throw Error(who + ": plane '" + p.role + "' is malformed");
        g[k].br = p.kind == RAD_PLANE_TABLE ? 0 : (p.block_r ? p.block_r : std::max<int64_t>(rows, 1));
        g[k].pitch = rad_row_bytes(p.dtype, static_cast<uint64_t>(pc));
        g[k].bytes = rad_plane_bytes(&p, rows, cols);
    }
    if (enc.n_planes < 1 || g[0].br != 1)
        throw Error(who + ": plane 0 ('" + std::string(enc.planes[0].role) + "') must be TILED with one row a weight row (it is streamed)");
    int64_t block = plan.q->row_block ? plan.q->row_block(&enc, rows, cols) : 0;
    if (block <= 0 || block > rows) block = std::max<int64_t>(rows, 1);
    for (int k = 1; k < enc.n_planes; ++k)
        if (g[k].br > 0 && block % g[k].br != 0 && block < rows)
            throw Error(who + ": its row block of " + std::to_string(block) + " rows splits plane '" + enc.planes[k].role +
                        "''s blocks of " + std::to_string(g[k].br) + " rows");

    std::vector<std::vector<uint8_t>> later(static_cast<size_t>(enc.n_planes));
    for (int k = 1; k < enc.n_planes; ++k) later[k].assign(g[k].bytes, 0);
    std::vector<uint8_t> first(static_cast<size_t>(block) * g[0].pitch);
    std::vector<float> in(static_cast<size_t>(block * cols)), out(in.size());
    std::vector<const char*> keys, vals;
    for (size_t i = 0; i < plan.keys.size(); ++i) {
        keys.push_back(plan.keys[i].c_str());
        vals.push_back(plan.vals[i].c_str());
    }
    const uint64_t es = static_cast<uint64_t>(rad_dtype_bits(v.dtype) / 8);
    double err2 = 0, norm2 = 0, max_abs = 0;
    w.begin_tensor(name, w.add_encoding(enc), shape, logical_dtype);
    for (int64_t r0 = 0; r0 < rows; r0 += block) {
        const int64_t n = std::min(block, rows - r0);
        for (int64_t i = 0; v.data && i < n * cols; ++i) {
            in[i] = rad_load_f32(v.dtype, v.data + static_cast<uint64_t>(r0 * cols) * es, i);
            if (!std::isfinite(in[i]))
                throw Error("weight '" + name + "' has a non-finite value (" + std::to_string(in[i]) + ") in row " +
                            std::to_string(r0 + i / cols) + ", column " + std::to_string(i % cols));
        }
        std::vector<void*> at(static_cast<size_t>(enc.n_planes));
        std::vector<const void*> dec(at.size());
        at[0] = first.data();
        for (int k = 1; k < enc.n_planes; ++k)
            at[k] = later[k].data() + (g[k].br > 0 ? static_cast<uint64_t>(r0 / g[k].br) * g[k].pitch : 0);
        RadQuantInput qi{};
        qi.name = name.c_str();
        qi.rows = rows;
        qi.cols = cols;
        qi.r0 = r0;
        qi.n_rows = n;
        qi.data = v.data ? in.data() : nullptr;  // none: a weight stored quantised, which its quantiser reads itself
        qi.opt_keys = keys.data();
        qi.opt_vals = vals.data();
        qi.n_opts = static_cast<int32_t>(keys.size());
        if (int rc = plan.q->quantize(&enc, &qi, at.data()); rc != RAD_OK)
            throw Error(who + ": quantize failed on rows " + std::to_string(r0) + ".." + std::to_string(r0 + n) + " (" + status_name(rc) +
                        ")");
        // The block's planes read as a weight of its own n rows (the block holds whole plane
        // blocks), by the core's decoder or the quantiser's hook for a scheme of its own.
        for (size_t k = 0; k < at.size(); ++k) dec[k] = at[k];
        int rc = rad_decode_rows(&enc, n, cols, 0, n, dec.data(), out.data());
        if (rc == RAD_E_UNSUPPORTED && plan.q->decode) rc = plan.q->decode(&enc, n, cols, 0, n, dec.data(), out.data());
        if (rc != RAD_OK)
            throw Error(who + ": nothing decodes the scheme '" + std::string(enc.scheme) + "' it wrote (" + status_name(rc) +
                        "): a scheme of a quantiser's own needs its decode hook");
        for (int64_t i = 0; v.data && i < n * cols; ++i) {
            const double d = static_cast<double>(in[i]) - out[i];
            err2 += d * d;
            norm2 += static_cast<double>(in[i]) * in[i];
            max_abs = std::max(max_abs, std::fabs(d));
        }
        w.write_plane0(std::span<const uint8_t>(first.data(), static_cast<size_t>(n) * g[0].pitch));
    }
    std::vector<std::span<const uint8_t>> rest;
    for (int k = 1; k < enc.n_planes; ++k) rest.emplace_back(later[k]);
    w.end_tensor(rest);
    WeightError e;
    e.rel_frobenius = norm2 > 0 ? std::sqrt(err2 / norm2) : std::sqrt(err2);
    e.max_abs = max_abs;
    return e;
}

}  // namespace radiance::convert
