#include "truncation.h"

#include <algorithm>

#include "token_order.h"

namespace radiance::sampling::detail {

namespace {

bool uses_top_k(const SamplingParams& s, size_t n) { return s.top_k > 0 && static_cast<size_t>(s.top_k) < n; }

double mass_of(std::span<const float> p, std::span<const int32_t> ids) {
    double m = 0;
    for (int32_t id : ids) m += p[static_cast<size_t>(id)];
    return m;
}

// How many of the most likely candidates top_p keeps: the shortest prefix (in MoreLikely
// order) whose mass reaches top_p * total, at most `cap`. Sorts just enough of `cand`: a
// peaked distribution needs only its first few dozen entries ordered.
size_t top_p_length(std::span<const float> p, std::vector<int32_t>& cand, size_t cap, double target) {
    const MoreLikely order{p};
    size_t sorted = 0;
    double cum = 0;
    for (size_t m = std::min<size_t>(cap, 64);; m = std::min(cap, m * 4)) {
        std::partial_sort(cand.begin() + static_cast<ptrdiff_t>(sorted), cand.begin() + static_cast<ptrdiff_t>(m),
                          cand.end(), order);
        for (; sorted < m; ++sorted) {
            cum += p[static_cast<size_t>(cand[sorted])];
            if (cum >= target) return sorted + 1;
        }
        if (m == cap) return cap;
    }
}

}  // namespace

bool truncates(const SamplingParams& s, size_t vocab) {
    return uses_top_k(s, vocab) || s.top_p < 1.0f || s.min_p > 0.0f;
}

void surviving_tokens(std::span<const float> p, const SamplingParams& s, std::vector<int32_t>& survivors) {
    const MoreLikely order{p};
    std::vector<int32_t>& cand = survivors;
    cand.clear();
    for (size_t i = 0; i < p.size(); ++i)
        if (p[i] > 0) cand.push_back(static_cast<int32_t>(i));  // underflowed tokens cannot be drawn anyway

    // top_k: the k most likely; the set is unique because MoreLikely is a strict total order.
    if (uses_top_k(s, cand.size())) {
        const auto k = static_cast<size_t>(s.top_k);
        std::nth_element(cand.begin(), cand.begin() + static_cast<ptrdiff_t>(k - 1), cand.end(), order);
        cand.resize(k);
    }
    // min_p keeps p >= min_p * max(p) = min_p: also a prefix in MoreLikely order, so applying it
    // after top_p equals cutting top_p's prefix at min_p's length. Clamped so the top token stays.
    size_t cap = cand.size();
    if (s.min_p > 0.0f) {
        const float threshold = std::min(s.min_p, 1.0f);
        cap = static_cast<size_t>(
            std::count_if(cand.begin(), cand.end(), [&](int32_t id) { return p[static_cast<size_t>(id)] >= threshold; }));
    }
    if (s.top_p < 1.0f && !cand.empty()) {
        // top_p renormalises over what top_k left, so its target is a share of that mass.
        const double target = std::max(0.0f, s.top_p) * mass_of(p, cand);
        cand.resize(top_p_length(p, cand, cap, target));
    } else if (cap < cand.size()) {
        std::nth_element(cand.begin(), cand.begin() + static_cast<ptrdiff_t>(cap - 1), cand.end(), order);
        cand.resize(cap);
    }
    std::sort(cand.begin(), cand.end());
}

}  // namespace radiance::sampling::detail
