// rad_rope_freqs.h: rope's frequencies as docs/OPS.md defines them (transformers' initialisers:
// default, linear, llama3, yarn), header-only so every host kernel library computes the same bits.
// Compile the including file with -ffp-contract=off: an angle is pos * inv_freq, and at position
// 10^5 one ulp of inv_freq moves cos/sin by 10^-3.
#ifndef RADIANCE_RAD_ROPE_FREQS_H
#define RADIANCE_RAD_ROPE_FREQS_H

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "../rad_plugin.h"

struct RadRopeFreqs {
    std::vector<float> inv;
    float attn = 1.0f;  // cos/sin multiplier (yarn's attention factor)
};

inline float rad_yarn_correction_dim(double rotations, int64_t dim, double base, double max_pos) {
    return static_cast<float>((static_cast<double>(dim) * std::log(max_pos / (rotations * 2.0 * M_PI))) / (2.0 * std::log(base)));
}

inline bool rad_rope_freqs(const RadArgs* a, int64_t rot, RadRopeFreqs* f) {
    const double theta = rad_args_getf_or(a, "theta", 10000.0);
    const char* scaling = rad_args_gets_or(a, "scaling", "none");
    const double factor = rad_args_getf_or(a, "factor", 1.0);
    const int64_t half = rot / 2;
    std::vector<float> base_pow(static_cast<size_t>(half));
    f->inv.resize(static_cast<size_t>(half));
    f->attn = 1.0f;
    for (int64_t j = 0; j < half; ++j) {
        const float e = static_cast<float>(2 * j) / static_cast<float>(rot);
        base_pow[j] = static_cast<float>(std::pow(theta, static_cast<double>(e)));
        f->inv[j] = 1.0f / base_pow[j];
    }
    if (!std::strcmp(scaling, "none") || !std::strcmp(scaling, "default")) return true;
    if (!std::strcmp(scaling, "linear")) {
        for (auto& v : f->inv) v = v / static_cast<float>(factor);
        return true;
    }
    const double orig = static_cast<double>(rad_args_geti_or(a, "orig_ctx", 8192));
    if (!std::strcmp(scaling, "llama3")) {
        const float lo = static_cast<float>(rad_args_getf_or(a, "low_freq_factor", 1.0));
        const float hi = static_cast<float>(rad_args_getf_or(a, "high_freq_factor", 4.0));
        const float fac = static_cast<float>(factor);
        const float lo_wl = static_cast<float>(orig) / lo, hi_wl = static_cast<float>(orig) / hi;
        for (auto& v : f->inv) {
            const float wl = static_cast<float>(2.0 * M_PI) / v;
            float scaled = wl > lo_wl ? v / fac : v;
            if (!(wl < hi_wl) && !(wl > lo_wl)) {
                const float s = (static_cast<float>(orig) / wl - lo) / (hi - lo);
                scaled = (1.0f - s) * scaled / fac + s * scaled;
            }
            v = scaled;
        }
        return true;
    }
    if (!std::strcmp(scaling, "yarn")) {
        const double beta_fast = rad_args_getf_or(a, "beta_fast", 32.0);
        const double beta_slow = rad_args_getf_or(a, "beta_slow", 1.0);
        double attn = factor <= 1.0 ? 1.0 : 0.1 * std::log(factor) + 1.0;
        f->attn = static_cast<float>(rad_args_getf_or(a, "attn_factor", attn));
        double low = std::floor(rad_yarn_correction_dim(beta_fast, rot, theta, orig));
        double high = std::ceil(rad_yarn_correction_dim(beta_slow, rot, theta, orig));
        low = std::max(low, 0.0);
        high = std::min(high, static_cast<double>(rot - 1));
        if (low == high) high += 0.001;
        for (int64_t j = 0; j < half; ++j) {
            float ramp = (static_cast<float>(j) - static_cast<float>(low)) / static_cast<float>(high - low);
            ramp = std::fmin(std::fmax(ramp, 0.0f), 1.0f);
            const float extra = 1.0f - ramp;  // weight of the unscaled frequency
            const float interp = 1.0f / (static_cast<float>(factor) * base_pow[j]);
            f->inv[j] = interp * (1.0f - extra) + f->inv[j] * extra;
        }
        return true;
    }
    return false;
}

#endif
