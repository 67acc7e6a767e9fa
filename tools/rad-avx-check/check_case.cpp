#include "check_case.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace avxcheck {

void Gen::fill(Operand& o, int64_t n, float lo, float hi) {
    const int bytes = rad_dtype_bits(o.dtype) / 8;
    o.bytes.resize(static_cast<size_t>(n * bytes));
    for (int64_t i = 0; i < n; ++i) rad_store_f32(o.dtype, o.bytes.data(), i, uniform(lo, hi));
}

Operand Gen::rows(int64_t rows, int64_t cols, int64_t pad, float lo, float hi) {
    Operand o;
    o.rank = 2;
    o.shape[0] = rows;
    o.shape[1] = cols;
    o.pitch = (cols + pad) * 4;
    fill(o, std::max<int64_t>(rows, 1) * (cols + pad), lo, hi);
    return o;
}

Operand Gen::weight(int dt, int64_t rows, int64_t cols, float lo, float hi) {
    Operand o;
    o.dtype = dt;
    o.rank = 2;
    o.shape[0] = rows;
    o.shape[1] = cols;
    fill(o, rows * cols, lo, hi);
    return o;
}

Operand Gen::vector(int dt, int64_t n, float lo, float hi) {
    Operand o;
    o.dtype = dt;
    o.shape[0] = n;
    fill(o, n, lo, hi);
    return o;
}

Operand Gen::cache(int dt, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
    Operand o;
    o.dtype = dt;
    o.rank = 4;
    o.shape[0] = d0;
    o.shape[1] = d1;
    o.shape[2] = d2;
    o.shape[3] = d3;
    fill(o, d0 * d1 * d2 * d3, -1, 1);
    return o;
}

Operand i32(const std::vector<int32_t>& v) {
    Operand o;
    o.dtype = RAD_I32;
    o.shape[0] = static_cast<int64_t>(v.size());
    o.bytes.resize(v.size() * 4);
    if (!v.empty()) std::memcpy(o.bytes.data(), v.data(), v.size() * 4);
    return o;
}

Operand i32_2d(const std::vector<int32_t>& v, int64_t rows, int64_t cols) {
    Operand o = i32(v);
    o.rank = 2;
    o.shape[0] = rows;
    o.shape[1] = cols;
    return o;
}

Operand absent() {
    Operand o;
    o.absent = true;
    return o;
}

Operand alias_of(int other, const Operand& like) {
    Operand o = like;
    o.bytes.clear();
    o.alias = other;
    o.output = false;
    return o;
}

ParamValue pint(int64_t v) {
    ParamValue p;
    p.type = RAD_P_INT;
    p.i = v;
    return p;
}
ParamValue pf64(double v) {
    ParamValue p;
    p.type = RAD_P_F64;
    p.f = v;
    return p;
}
ParamValue pstr(const std::string& v) {
    ParamValue p;
    p.type = RAD_P_STR;
    p.s = v;
    return p;
}

Outcome launch(const Case& c, const KernelLib& lib, const RadKernelInfo* row, const Params& derived) {
    Outcome o;
    o.buffers.resize(c.opds.size());
    for (size_t i = 0; i < c.opds.size(); ++i)
        if (c.opds[i].alias < 0) o.buffers[i] = c.opds[i].bytes;
    std::vector<RadTensor> t(c.opds.size());
    for (size_t i = 0; i < c.opds.size(); ++i) {
        const Operand& d = c.opds[i];
        RadTensor& x = t[i];
        std::memset(&x, 0, sizeof x);
        if (d.absent) continue;
        x.data = d.alias >= 0 ? o.buffers[static_cast<size_t>(d.alias)].data() : o.buffers[i].data();
        x.dtype = d.dtype;
        x.rank = d.rank;
        for (int k = 0; k < RAD_MAX_RANK; ++k) x.shape[k] = d.shape[k];
        x.row_pitch = d.pitch;
    }
    std::vector<RadParam> ps;
    for (const Params* src : {&c.params, &derived})
        for (auto& [name, v] : *src) {
            RadParam p;
            std::memset(&p, 0, sizeof p);
            p.name = name.c_str();
            p.type = v.type;
            p.i = v.i;
            p.f = v.f;
            p.s = v.type == RAD_P_STR ? v.s.c_str() : nullptr;
            ps.push_back(p);
        }
    RadArgs a;
    std::memset(&a, 0, sizeof a);
    a.schema = lib.schema(c.op);
    a.t = t.data();
    a.n_t = static_cast<int32_t>(t.size());
    a.p = ps.data();
    a.n_p = static_cast<int32_t>(ps.size());
    a.world_size = 1;
    o.rc = row->launch(&a);
    return o;
}

double max_rel_err(const Case& c, const Outcome& got, const Outcome& want) {
    double worst = 0;
    for (size_t i = 0; i < c.opds.size(); ++i) {
        const Operand& d = c.opds[i];
        if (!d.output) continue;
        const auto &g = got.buffers[i], &w = want.buffers[i];
        if (g.size() != w.size()) return std::numeric_limits<double>::infinity();
        // An fp8 cache's codes: every library quantises with rad_kv_fp8.h, so the same bytes or wrong.
        if (d.dtype == RAD_FP8_E4M3) {
            if (g != w) return std::numeric_limits<double>::infinity();
            continue;
        }
        const int64_t n = static_cast<int64_t>(g.size()) / (rad_dtype_bits(d.dtype) / 8);
        double diff = 0, norm = 0;
        for (int64_t k = 0; k < n; ++k) {
            const double a = rad_load_f32(d.dtype, g.data(), k), b = rad_load_f32(d.dtype, w.data(), k);
            diff += (a - b) * (a - b);
            norm += b * b;
        }
        const double e = norm > 0 ? std::sqrt(diff / norm) : std::sqrt(diff);
        if (!(e <= worst)) worst = std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
    }
    return worst;
}

}  // namespace avxcheck
