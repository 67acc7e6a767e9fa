// random_weights.cpp: see random_weights.h. Elements 4q .. 4q + 3 of a matrix come from the
// sampler's counter-based Philox block (key: the seed and the name, counter: q) through two
// Box-Muller draws, so threads split the elements without sharing a generator.
#include "radiance/convert/random_weights.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "radiance/rad_plugin.h"
#include "radiance/sampling/counter_rng.h"
#include "radiance/util/error.h"

namespace radiance::convert {
namespace {

uint64_t hash_name(const std::string& s) {  // FNV-1a
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

}  // namespace

std::vector<uint8_t> random_weight(const std::string& name, const std::vector<int64_t>& shape, int dtype, double std, uint64_t seed) {
    if (dtype != RAD_F32 && dtype != RAD_BF16 && dtype != RAD_F16)
        throw Error("random weight '" + name + "': dtype " + rad_dtype_name(dtype) + " is not f32, bf16 or f16");
    uint64_t count = 1;
    for (int64_t d : shape) count *= static_cast<uint64_t>(d);
    std::vector<uint8_t> out(count * static_cast<uint64_t>(rad_dtype_bits(dtype) / 8));
    if (shape.size() < 2) {  // norm weights ones, biases zeros
        const float v = name.find("norm") != std::string::npos ? 1.0f : 0.0f;
        for (uint64_t i = 0; i < count; ++i) rad_store_f32(dtype, out.data(), static_cast<int64_t>(i), v);
        return out;
    }
    const uint64_t h = hash_name(name);
    const sampling::PhiloxKey key{static_cast<uint32_t>(seed ^ h), static_cast<uint32_t>((seed ^ h) >> 32)};
    const float s = static_cast<float>(std);
    auto fill = [&](uint64_t lo, uint64_t hi) {
        for (uint64_t q = lo; q < hi; ++q) {
            const sampling::PhiloxCounter r =
                sampling::philox4x32_10({static_cast<uint32_t>(q), static_cast<uint32_t>(q >> 32), 0, 0}, key);
            for (int k = 0; k < 2; ++k) {  // one Box-Muller draw per two words: two elements
                const float u1 = (static_cast<float>(r[2 * k] >> 8) + 1.0f) * (1.0f / 16777217.0f);  // (0, 1]
                const float u2 = static_cast<float>(r[2 * k + 1] >> 8) * (1.0f / 16777216.0f);
                const float rad = std::sqrt(-2.0f * std::log(u1)) * s;
                const float a = 6.2831853f * u2;
                const uint64_t i = 4 * q + 2 * static_cast<uint64_t>(k);
                if (i < count) rad_store_f32(dtype, out.data(), static_cast<int64_t>(i), rad * std::cos(a));
                if (i + 1 < count) rad_store_f32(dtype, out.data(), static_cast<int64_t>(i + 1), rad * std::sin(a));
            }
        }
    };
    const uint64_t quads = (count + 3) / 4;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const unsigned n = quads < (1u << 19) ? 1u : std::min(hw, 64u);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < n; ++t) threads.emplace_back(fill, quads * t / n, quads * (t + 1) / n);
    for (auto& t : threads) t.join();
    return out;
}

}  // namespace radiance::convert
