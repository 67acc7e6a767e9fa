#include "quant_test_util.h"

#include <cmath>
#include <memory>
#include <random>
#include <stdexcept>

#include "radiance/core/registry.h"

namespace qtest {

const RadQuantizerInfo& quantizer(const std::string& name) {
    static std::unique_ptr<radiance::core::Registry> reg = [] {
        radiance::core::LoadOptions lo;
        lo.homes = {RAD_BUILD_HOME_DIR};
        return std::make_unique<radiance::core::Registry>(radiance::core::Registry::load(lo));
    }();
    const RadQuantizerInfo* q = reg->quantizer(name);
    if (!q) throw std::runtime_error("no quantiser '" + name + "' in " RAD_BUILD_HOME_DIR);
    return *q;
}

Quantized run(const RadQuantizerInfo& q, const std::vector<float>& w, int64_t rows, int64_t cols,
              const std::map<std::string, std::string>& opts, int64_t block_rows) {
    std::vector<const char*> keys, vals;
    for (auto& [k, v] : opts) {
        keys.push_back(k.c_str());
        vals.push_back(v.c_str());
    }
    Quantized out;
    out.rc = q.encoding("w", rows, cols, keys.data(), vals.data(), static_cast<int>(keys.size()), &out.enc);
    if (out.rc != RAD_OK) return out;
    for (int k = 0; k < out.enc.n_planes; ++k) out.planes.emplace_back(rad_plane_bytes(&out.enc.planes[k], rows, cols), 0xA5);
    const int64_t block = block_rows ? block_rows : (q.row_block ? q.row_block(&out.enc, rows, cols) : rows);
    for (int64_t r0 = 0; r0 < rows; r0 += block) {
        RadQuantInput in{};
        in.name = "w";
        in.rows = rows;
        in.cols = cols;
        in.r0 = r0;
        in.n_rows = std::min(block, rows - r0);
        in.data = w.data() + r0 * cols;
        in.opt_keys = keys.data();
        in.opt_vals = vals.data();
        in.n_opts = static_cast<int32_t>(keys.size());
        std::vector<void*> at;
        for (int k = 0; k < out.enc.n_planes; ++k) {
            const RadPlaneDesc& p = out.enc.planes[k];
            int64_t pr = 0, pc = 0;
            rad_plane_extent(&p, rows, cols, &pr, &pc);
            const int64_t br = p.block_r ? p.block_r : rows;
            at.push_back(out.planes[k].data() + (r0 / br) * rad_row_bytes(p.dtype, static_cast<uint64_t>(pc)));
        }
        if (int rc = q.quantize(&out.enc, &in, at.data()); rc != RAD_OK) {
            out.rc = rc;
            return out;
        }
    }
    return out;
}

std::vector<float> decode(const Quantized& qz, int64_t rows, int64_t cols) {
    std::vector<const void*> p;
    for (auto& v : qz.planes) p.push_back(v.data());
    std::vector<float> out(static_cast<size_t>(rows * cols), NAN);
    if (rad_decode_rows(&qz.enc, rows, cols, 0, rows, p.data(), out.data()) != RAD_OK) throw std::runtime_error("decode failed");
    return out;
}

double rel_frobenius(const std::vector<float>& a, const std::vector<float>& b) {
    double d = 0, n = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        d += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
        n += static_cast<double>(b[i]) * b[i];
    }
    return std::sqrt(d / n);
}

std::vector<float> gaussian(size_t n, float sd, uint32_t seed) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, sd);
    std::vector<float> v(n);
    for (auto& x : v) x = dist(gen);
    return v;
}

}  // namespace qtest
