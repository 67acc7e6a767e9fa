#include "logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "token_order.h"

namespace radiance::sampling::detail {

Normalizer normalizer(std::span<const float> x) {
    Normalizer n;
    n.max = -std::numeric_limits<float>::infinity();
    for (float v : x) n.max = std::max(n.max, v);
    if (std::isinf(n.max) && n.max < 0) {
        n.log_sum = -std::numeric_limits<double>::infinity();
        return n;
    }
    double sum = 0;
    for (float v : x) sum += std::exp(static_cast<double>(v) - n.max);
    n.log_sum = n.max + std::log(sum);
    return n;
}

std::vector<TokenLogprob> top_logprobs(std::span<const float> x, int32_t n, double log_sum, std::vector<int32_t>& scratch) {
    const size_t k = std::min(static_cast<size_t>(std::max(n, 0)), x.size());
    std::vector<TokenLogprob> out;
    if (k == 0) return out;
    scratch.resize(x.size());
    for (size_t i = 0; i < x.size(); ++i) scratch[i] = static_cast<int32_t>(i);
    std::partial_sort(scratch.begin(), scratch.begin() + static_cast<ptrdiff_t>(k), scratch.end(), MoreLikely{x});
    out.reserve(k);
    for (size_t i = 0; i < k; ++i) {
        const int32_t id = scratch[i];
        out.push_back({id, static_cast<float>(x[static_cast<size_t>(id)] - log_sum)});
    }
    return out;
}

}  // namespace radiance::sampling::detail
