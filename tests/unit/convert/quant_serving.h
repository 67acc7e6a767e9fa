// quant_serving.h: the checks a quantised container's serving is put through (the llama family's
// in test_quantised_serving.cpp, the other dense families' in test_quantised_families.cpp).
#pragma once
#include <catch2/catch.hpp>

#include <radiance/rad_decode.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "radiance/container/container.h"
#include "serve_logits.h"

namespace convtest {

using namespace radiance;

// ||a - b|| / ||b||
inline double rel_rms(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0, norm = 0;
    for (size_t i = 0; i < a.size(); ++i) diff += (a[i] - b[i]) * (a[i] - b[i]), norm += b[i] * b[i];
    return std::sqrt(diff / norm);
}

// The container's twin with every tensor decoded by the core to plain f32 and the quant
// descriptor cleared, so the family's unquantised plugin serves it (gemm over the decoded
// values): what a quantised plugin's logits are checked against.
inline void write_decoded(const container::Reader& src, const std::string& path) {
    container::Writer w(path);
    for (auto& [k, v] : src.meta()) w.set_meta(k, v);
    w.set_meta("arch.quant", container::MetaValue::of_str(""));
    const uint32_t f32 = w.add_encoding(rad_encoding_plain(RAD_F32));
    for (const container::TensorInfo& t : src.tensors()) {
        std::vector<const void*> planes;
        for (size_t p = 0; p < t.planes.size(); ++p) planes.push_back(src.plane_data(t, p));
        std::vector<float> v(static_cast<size_t>(t.rows() * t.cols()));
        REQUIRE(rad_decode_rows(&src.encodings()[t.encoding], t.rows(), t.cols(), 0, t.rows(), planes.data(), v.data()) == RAD_OK);
        w.add_tensor(t.name, f32, t.shape, RAD_F32, {std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4)});
    }
    w.finish();
}

// libcpu's gemm_q rows (libref serving what they refuse) give libref's logits on `rad` within
// libcpu's gemm tolerance: only the order of the sums differs.
inline void check_libcpu_as_libref(const std::string& rad) {
    std::string report;
    const auto lc = logits(rad, {"libcpu", "libref"}, &report), lr = logits(rad, {"libref"});
    INFO(report);
    CHECK(report.find("cpu_gemm_q") != std::string::npos);
    REQUIRE(lc.size() == lr.size());
    CHECK(rel_rms(lc, lr) < 1e-4);
}

}  // namespace convtest
