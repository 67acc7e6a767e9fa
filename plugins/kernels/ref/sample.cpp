// sample.cpp: libref's `sample` and `argmax` (docs/OPS.md), the host sampler's rules written the
// plainest way: a full sort for the cuts, sums in double in ascending order; a structured-output
// mask makes the tokens it leaves out -inf first.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "ref_util.h"

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// NaN loses to everything and +inf ties with the largest float, as the host sampler maps them.
float sane(float v) { return std::isnan(v) ? kNegInf : v == std::numeric_limits<float>::infinity() ? FLT_MAX : v; }

int64_t argmax_of(const std::vector<float>& v) {
    int64_t best = 0;
    for (size_t j = 1; j < v.size(); ++j)
        if (v[j] > v[static_cast<size_t>(best)]) best = static_cast<int64_t>(j);  // strict: ties keep the lower id
    return best;
}

// The first of `ids` (ascending) whose running sum of p exceeds u * sum; the last one if rounding
// leaves the target at the top.
int32_t draw(const std::vector<float>& p, const std::vector<int32_t>& ids, double u) {
    double mass = 0;
    for (int32_t id : ids) mass += p[static_cast<size_t>(id)];
    const double target = u * mass;
    double cum = 0;
    for (int32_t id : ids) {
        cum += p[static_cast<size_t>(id)];
        if (cum > target) return id;
    }
    return ids.back();
}

// Structured output's mask (null: none): a token whose bit is clear counts as -inf.
bool allowed(const uint32_t* mask, int64_t j) { return !mask || ((mask[j >> 5] >> (j & 31)) & 1u); }

int32_t sample_row(const float* x, int64_t vocab, const float* cfg, double u, const uint32_t* mask) {
    const float temperature = cfg[0], top_p = cfg[1], min_p = cfg[2];
    const auto top_k = static_cast<int64_t>(cfg[3]);
    std::vector<float> v(x, x + vocab);
    const bool greedy = !(temperature > 0.0f);
    for (int64_t j = 0; j < vocab; ++j) {
        float& e = v[static_cast<size_t>(j)];
        e = allowed(mask, j) ? sane(!greedy && temperature != 1.0f ? e / temperature : e) : kNegInf;
    }
    const int64_t top = argmax_of(v);
    const float mx = v[static_cast<size_t>(top)];
    if (greedy || mx == kNegInf) return static_cast<int32_t>(top);

    std::vector<float> p(v.size());
    for (size_t j = 0; j < v.size(); ++j) p[j] = std::exp(v[j] - mx);
    std::vector<int32_t> ids(v.size());
    std::iota(ids.begin(), ids.end(), 0);
    const bool cuts = (top_k > 0 && top_k < vocab) || top_p < 1.0f || min_p > 0.0f;
    if (!cuts) return draw(p, ids, u);

    std::vector<int32_t> cand;
    for (int32_t id : ids)
        if (p[static_cast<size_t>(id)] > 0) cand.push_back(id);
    std::sort(cand.begin(), cand.end(), [&](int32_t a, int32_t b) {
        const float pa = p[static_cast<size_t>(a)], pb = p[static_cast<size_t>(b)];
        return pa > pb || (pa == pb && a < b);
    });
    if (top_k > 0 && top_k < static_cast<int64_t>(cand.size())) cand.resize(static_cast<size_t>(top_k));
    size_t keep = cand.size();
    if (top_p < 1.0f) {
        double mass = 0;
        for (int32_t id : cand) mass += p[static_cast<size_t>(id)];
        const double target = std::max(0.0f, top_p) * mass;
        double cum = 0;
        for (size_t i = 0; i < cand.size(); ++i) {
            cum += p[static_cast<size_t>(cand[i])];
            if (cum >= target) {
                keep = i + 1;
                break;
            }
        }
    }
    if (min_p > 0.0f) {
        const float threshold = std::min(min_p, 1.0f);
        size_t n = 0;
        while (n < cand.size() && p[static_cast<size_t>(cand[n])] >= threshold) ++n;
        keep = std::min(keep, n);
    }
    cand.resize(keep);
    std::sort(cand.begin(), cand.end());
    return draw(p, cand, u);
}

}  // namespace

int ref_argmax(const RadArgs* a) {
    const RadTensor* x = rad_arg_in(a, 0);
    RadTensor* y = rad_arg_out(a, 1);
    if (!ref::is_f32(x) || !y || y->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), vocab = rad_args_geti(a, "vocab");
    if (vocab <= 0) return RAD_E_ARG;
    const RadTensor* mask = rad_arg_in(a, 2);
    if (mask && (mask->dtype != RAD_U32 || mask->rank != 2 || mask->shape[1] * 32 < vocab)) return RAD_E_DTYPE;
    int32_t* out = static_cast<int32_t*>(y->data);
    for (int64_t i = 0; i < n; ++i) {
        const float* row = ref::row<const float>(x, i);
        const uint32_t* m = mask ? ref::row<const uint32_t>(mask, i) : nullptr;
        std::vector<float> v(row, row + vocab);
        for (int64_t j = 0; j < vocab; ++j) v[static_cast<size_t>(j)] = allowed(m, j) ? sane(v[static_cast<size_t>(j)]) : kNegInf;
        out[i] = static_cast<int32_t>(argmax_of(v));
    }
    return RAD_OK;
}

int ref_sample(const RadArgs* a) {
    const RadTensor *x = rad_arg_in(a, 0), *cfg = rad_arg_in(a, 1), *u = rad_arg_in(a, 2);
    RadTensor* y = rad_arg_out(a, 3);
    if (!ref::is_f32(x) || !ref::is_f32(cfg) || !u || u->dtype != RAD_F64 || !y || y->dtype != RAD_I32) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), vocab = rad_args_geti(a, "vocab");
    if (vocab <= 0) return RAD_E_ARG;
    const RadTensor* mask = rad_arg_in(a, 4);
    if (mask && (mask->dtype != RAD_U32 || mask->rank != 2 || mask->shape[1] * 32 < vocab)) return RAD_E_DTYPE;
    const auto* draws = static_cast<const double*>(u->data);
    int32_t* out = static_cast<int32_t*>(y->data);
    for (int64_t i = 0; i < n; ++i)
        out[i] = sample_row(ref::row<const float>(x, i), vocab, ref::row<const float>(cfg, i), draws[i],
                            mask ? ref::row<const uint32_t>(mask, i) : nullptr);
    return RAD_OK;
}
