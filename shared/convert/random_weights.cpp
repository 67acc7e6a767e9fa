// random_weights.cpp: see random_weights.h. Element i of a matrix takes a counter-based hash of
// (seed, name, i) through Box-Muller, so threads split the rows without sharing a generator.
#include "radiance/convert/random_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <thread>

#include "radiance/rad_plugin.h"
#include "radiance/util/error.h"

namespace radiance::convert {
namespace {

uint64_t mix(uint64_t z) {  // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t hash_name(const std::string& s) {  // FNV-1a
    uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ULL;
    return h;
}

void store(uint8_t* out, uint64_t i, int dtype, float v) {
    if (dtype == RAD_F32) {
        std::memcpy(out + i * 4, &v, 4);
    } else {
        const uint16_t h = dtype == RAD_BF16 ? rad_f32_to_bf16(v) : rad_f32_to_f16(v);
        std::memcpy(out + i * 2, &h, 2);
    }
}

}  // namespace

std::vector<uint8_t> random_weight(const std::string& name, const std::vector<int64_t>& shape, int dtype, double std,
                                   uint64_t seed) {
    if (dtype != RAD_F32 && dtype != RAD_BF16 && dtype != RAD_F16)
        throw Error("random weight '" + name + "': dtype " + rad_dtype_name(dtype) + " is not f32, bf16 or f16");
    uint64_t count = 1;
    for (int64_t d : shape) count *= static_cast<uint64_t>(d);
    std::vector<uint8_t> out(count * static_cast<uint64_t>(rad_dtype_bits(dtype) / 8));
    if (shape.size() < 2) {  // norm weights ones, biases zeros
        const float v = name.find("norm") != std::string::npos ? 1.0f : 0.0f;
        for (uint64_t i = 0; i < count; ++i) store(out.data(), i, dtype, v);
        return out;
    }
    const uint64_t key = mix(seed ^ hash_name(name));
    const float s = static_cast<float>(std);
    // Pairs of elements share one Box-Muller draw (2i and 2i + 1).
    auto fill = [&](uint64_t lo, uint64_t hi) {
        for (uint64_t p = lo; p < hi; ++p) {
            const uint64_t r = mix(key + p * 0x9e3779b97f4a7c15ULL);
            const float u1 = (static_cast<float>(r >> 40) + 1.0f) * (1.0f / 16777217.0f);  // (0, 1]
            const float u2 = static_cast<float>((r >> 16) & 0xffffffu) * (1.0f / 16777216.0f);
            const float rad = std::sqrt(-2.0f * std::log(u1)) * s;
            const float a = 6.2831853f * u2;
            store(out.data(), 2 * p, dtype, rad * std::cos(a));
            if (2 * p + 1 < count) store(out.data(), 2 * p + 1, dtype, rad * std::sin(a));
        }
    };
    const uint64_t pairs = (count + 1) / 2;
    const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
    const unsigned n = pairs < (1u << 20) ? 1u : std::min(hw, 64u);
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < n; ++t) threads.emplace_back(fill, pairs * t / n, pairs * (t + 1) / n);
    for (auto& t : threads) t.join();
    return out;
}

}  // namespace radiance::convert
