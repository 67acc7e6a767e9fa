// sampler.cpp: greedy selection with log-softmax logprobs; temperature sampling arrives with the
// shared sampling library (shared/sampling), and until then a sampled request is refused by the
// front end rather than silently served greedily.
#include "sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace radiance::worker {

ipc::Sampled sample_row(const float* logits, int64_t vocab, const ipc::SampleSpec& spec) {
    std::vector<float> l(logits, logits + vocab);
    for (auto& [tok, bias] : spec.logit_bias)
        if (tok >= 0 && tok < vocab) l[tok] += bias;
    ipc::Sampled out;
    int64_t best = 0;
    for (int64_t i = 1; i < vocab; ++i)
        if (l[i] > l[best]) best = i;
    out.token = static_cast<int32_t>(best);
    if (spec.top_logprobs >= 0) {
        double mx = l[best], sum = 0;
        for (float v : l) sum += std::exp(static_cast<double>(v) - mx);
        const double lse = mx + std::log(sum);
        out.logprob = static_cast<float>(l[best] - lse);
        std::vector<int32_t> idx(static_cast<size_t>(vocab));
        std::iota(idx.begin(), idx.end(), 0);
        const size_t k = std::min<size_t>(static_cast<size_t>(spec.top_logprobs), idx.size());
        std::partial_sort(idx.begin(), idx.begin() + static_cast<long>(k), idx.end(),
                          [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); });
        for (size_t i = 0; i < k; ++i) out.top.push_back({idx[i], static_cast<float>(l[idx[i]] - lse)});
    }
    return out;
}

}  // namespace radiance::worker
