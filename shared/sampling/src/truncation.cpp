#include "truncation.h"

#include <algorithm>
#include <bit>

#include "token_order.h"

namespace radiance::sampling::detail {

namespace {

bool uses_top_k(const SamplingParams& s, size_t n) { return s.top_k > 0 && static_cast<size_t>(s.top_k) < n; }

// Each cut keeps a prefix of MoreLikely's order, so it is a threshold: the last token it keeps.
// A token is kept when it is that token or more likely than it.
struct Cut {
    float value = 0;
    int32_t id = 0;
    bool on = false;
    bool keeps(float p, int32_t id_) const { return !on || p > value || (p == value && id_ <= id); }
};

// top_p buckets: p in (0, 1] by its sign, exponent and top 3 mantissa bits (p's bits order as p
// does), so a bucket spans a factor of 2^(1/8) and the crossing bucket holds few tokens.
constexpr int kBucketShift = 20;
constexpr size_t kBuckets = size_t{1} << (32 - kBucketShift);
size_t bucket_of(float p) { return std::bit_cast<uint32_t>(p) >> kBucketShift; }

// top_p's cut over the tokens of `ids`: the shortest MoreLikely prefix whose mass reaches
// `target`. Whole buckets above the crossing one are summed, and only the crossing bucket is
// sorted; the result equals walking the sorted candidates up to rounding of the sums.
Cut top_p_cut(std::span<const float> p, const std::vector<int32_t>& ids, double target, std::vector<int32_t>& scratch) {
    static thread_local std::vector<double> mass(kBuckets);  // candidates have p > 0: mass > 0 marks a bucket used
    std::fill(mass.begin(), mass.end(), 0.0);
    for (int32_t id : ids) mass[bucket_of(p[static_cast<size_t>(id)])] += p[static_cast<size_t>(id)];
    double above = 0;
    size_t b = kBuckets;
    size_t lowest = kBuckets;  // the smallest non-empty bucket: everything, when rounding never crosses
    for (size_t i = kBuckets; i-- > 0;) {
        if (!(mass[i] > 0)) continue;
        lowest = i;
        if (above + mass[i] >= target) {
            b = i;
            break;
        }
        above += mass[i];
    }
    if (b == kBuckets) {
        if (lowest == kBuckets) return {};  // no candidates
        b = lowest;
        above -= mass[lowest];
    }
    scratch.clear();
    for (int32_t id : ids) {
        const float v = p[static_cast<size_t>(id)];
        if (bucket_of(v) == b) scratch.push_back(id);
    }
    std::sort(scratch.begin(), scratch.end(), MoreLikely{p});
    double cum = above;
    for (int32_t id : scratch) {
        cum += p[static_cast<size_t>(id)];
        if (cum >= target) return {p[static_cast<size_t>(id)], id, true};
    }
    return {p[static_cast<size_t>(scratch.back())], scratch.back(), true};
}

}  // namespace

bool truncates(const SamplingParams& s, size_t vocab) { return uses_top_k(s, vocab) || s.top_p < 1.0f || s.min_p > 0.0f; }

void surviving_tokens(std::span<const float> p, const SamplingParams& s, std::vector<int32_t>& survivors) {
    static thread_local std::vector<int32_t> positive, scratch;
    positive.clear();
    for (size_t i = 0; i < p.size(); ++i)
        if (p[i] > 0) positive.push_back(static_cast<int32_t>(i));  // underflowed tokens cannot be drawn anyway

    // top_k: the k most likely (MoreLikely is a strict total order, so the set is unique); from
    // here on only they are candidates, in ascending ids.
    if (uses_top_k(s, positive.size())) {
        const auto k = static_cast<size_t>(s.top_k);
        std::nth_element(positive.begin(), positive.begin() + static_cast<ptrdiff_t>(k - 1), positive.end(), MoreLikely{p});
        positive.resize(k);
        std::sort(positive.begin(), positive.end());
    }
    const std::vector<int32_t>& cand = positive;
    // top_p renormalises over what top_k left, so its target is a share of that mass. min_p keeps
    // p >= min_p * max(p) = min_p (clamped so the top token stays): also a prefix, so applying it
    // after top_p equals cutting top_p's prefix at min_p's length.
    Cut by_p;
    if (s.top_p < 1.0f) {
        double mass = 0;
        for (int32_t id : cand) mass += p[static_cast<size_t>(id)];
        by_p = top_p_cut(p, cand, std::max(0.0f, s.top_p) * mass, scratch);
    }
    const bool by_min = s.min_p > 0.0f;
    const float floor_p = std::min(s.min_p, 1.0f);
    survivors.clear();
    for (int32_t id : cand) {  // ascending ids
        const float v = p[static_cast<size_t>(id)];
        if (by_p.keeps(v, id) && (!by_min || v >= floor_p)) survivors.push_back(id);
    }
}

}  // namespace radiance::sampling::detail
