// rad_rope_freqs.h: rope's frequencies as docs/OPS.md defines them (transformers' initialisers:
// default, linear, llama3, yarn, longrope), header-only so every host kernel library computes the same bits.
// Compile the including file with -ffp-contract=off: an angle is pos * inv_freq, and at position
// 10^5 one ulp of inv_freq moves cos/sin by 10^-3.
#ifndef RADIANCE_RAD_ROPE_FREQS_H
#define RADIANCE_RAD_ROPE_FREQS_H

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../rad_plugin.h"

struct RadRopeFreqs {
    std::vector<float> inv;
    float attn = 1.0f;  // cos/sin multiplier (yarn's and longrope's attention factor)
    // longrope: the frequencies of rows whose sequence reaches long_from (orig_ctx) in the step
    // (rad_rope_row_is_long); -1 for every other scaling, which has one set
    std::vector<float> inv_long;
    int64_t long_from = -1;
};

// A longrope factor list ("1.0,1.25,...", one per frequency) rounded to f32 as transformers'
// torch.tensor(factors, dtype=float32) rounds them; false unless it holds exactly `half` numbers.
inline bool rad_rope_factor_list(const char* s, int64_t half, std::vector<float>* out) {
    out->clear();
    if (!s) return false;
    while (*s) {
        char* end = nullptr;
        const double v = std::strtod(s, &end);
        if (end == s || !(v > 0)) return false;
        out->push_back(static_cast<float>(v));
        s = end;
        if (*s == ',') ++s;
        else if (*s) return false;
    }
    return static_cast<int64_t>(out->size()) == half;
}

// Whether row i turns by the long factors: transformers picks them for a forward whose largest
// position reaches orig_ctx, so here a row does when the last row of its own sequence in this
// step does (cu_seqlens i32 [n_seq + 1]; without it, the row's own position decides). A decode
// row is its sequence's last, so generation switches at orig_ctx as transformers' does; the
// choice never depends on the step's other sequences.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define RAD_ROPE_HD __host__ __device__  // libgpu's rope kernel asks the same question per row
#else
#define RAD_ROPE_HD
#endif
inline RAD_ROPE_HD bool rad_rope_row_is_long(int64_t long_from, const int32_t* pos, const int32_t* cu, int64_t n_seq, int64_t i) {
    if (long_from < 0) return false;
    int64_t last = i;
    if (cu) {
        int64_t lo = 0, hi = n_seq;  // the sequence s with cu[s] <= i < cu[s + 1]
        while (hi - lo > 1) {
            const int64_t mid = (lo + hi) / 2;
            if (cu[mid] <= i) lo = mid;
            else hi = mid;
        }
        last = cu[lo + 1] - 1;
    }
    return pos[last] >= long_from;
}

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
    f->inv_long.clear();
    f->long_from = -1;
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
    if (!std::strcmp(scaling, "longrope")) {
        // inv = 1 / (factor_j * theta^e), the product and the quotient in f32 as torch's
        std::vector<float> short_f, long_f;
        if (!rad_args_find(a, "orig_ctx") || !rad_rope_factor_list(rad_args_gets_or(a, "short_factor", nullptr), half, &short_f) ||
            !rad_rope_factor_list(rad_args_gets_or(a, "long_factor", nullptr), half, &long_f))
            return false;
        f->inv_long.resize(static_cast<size_t>(half));
        for (int64_t j = 0; j < half; ++j) {
            f->inv[j] = 1.0f / (short_f[j] * base_pow[j]);
            f->inv_long[j] = 1.0f / (long_f[j] * base_pow[j]);
        }
        f->long_from = static_cast<int64_t>(orig);
        f->attn = static_cast<float>(rad_args_getf_or(a, "attn_factor", 1.0));
        return true;
    }
    return false;
}

#endif
