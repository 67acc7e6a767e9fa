// Helpers shared by the sampling tests.
#pragma once
#include <cmath>
#include <map>
#include <vector>

#include "radiance/sampling/sampler.h"

namespace sampling_test {

using radiance::sampling::SamplingParams;

// Draws `n` tokens at positions 0..n-1 and counts them.
inline std::map<int32_t, int> histogram(const std::vector<float>& logits, const SamplingParams& p, int n) {
    radiance::sampling::Sampler s;
    std::map<int32_t, int> h;
    for (int i = 0; i < n; ++i) ++h[s.sample(logits, p, {}, static_cast<uint64_t>(i)).token];
    return h;
}

// Pearson's chi-square statistic of observed counts against expected probabilities.
inline double chi_square(const std::map<int32_t, int>& observed, const std::vector<double>& expected, int n) {
    double chi = 0;
    for (size_t id = 0; id < expected.size(); ++id) {
        const double e = expected[id] * n;
        auto it = observed.find(static_cast<int32_t>(id));
        const double o = it == observed.end() ? 0 : it->second;
        if (e == 0) continue;
        chi += (o - e) * (o - e) / e;
    }
    return chi;
}

inline std::vector<double> softmax(const std::vector<float>& x, double temperature = 1.0) {
    double mx = -INFINITY, sum = 0;
    for (float v : x) mx = std::max(mx, v / temperature);
    std::vector<double> p;
    for (float v : x) p.push_back(std::exp(v / temperature - mx)), sum += p.back();
    for (double& v : p) v /= sum;
    return p;
}

}  // namespace sampling_test
