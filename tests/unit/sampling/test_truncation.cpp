#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <set>

#include "sampling_test_util.h"
#include "truncation.h"

using namespace radiance::sampling;
using namespace sampling_test;

namespace {

// Logits whose softmax is exactly the given probabilities.
std::vector<float> logits_of(const std::vector<double>& probs) {
    std::vector<float> x;
    for (double p : probs) x.push_back(static_cast<float>(std::log(p)));
    return x;
}

std::set<int32_t> drawn(const std::vector<float>& logits, const SamplingParams& p, int n = 3000) {
    std::set<int32_t> s;
    for (auto& [id, count] : histogram(logits, p, n)) s.insert(id);
    return s;
}

// The straightforward definition: sort everything, cut three times.
std::vector<int32_t> reference_survivors(const std::vector<float>& prob, const SamplingParams& s) {
    std::vector<int32_t> ids;
    for (size_t i = 0; i < prob.size(); ++i)
        if (prob[i] > 0) ids.push_back(static_cast<int32_t>(i));
    std::stable_sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) { return prob[a] > prob[b]; });
    if (s.top_k > 0 && static_cast<size_t>(s.top_k) < ids.size()) ids.resize(static_cast<size_t>(s.top_k));
    if (s.top_p < 1) {
        double total = 0, cum = 0;
        for (int32_t id : ids) total += prob[id];
        size_t keep = 0;
        while (keep < ids.size()) {
            cum += prob[ids[keep++]];
            if (cum >= s.top_p * total) break;
        }
        ids.resize(keep);
    }
    if (s.min_p > 0) {
        size_t keep = 1;
        while (keep < ids.size() && prob[ids[keep]] >= s.min_p) ++keep;
        ids.resize(keep);
    }
    std::sort(ids.begin(), ids.end());
    return ids;
}

}  // namespace

TEST_CASE("sampling top_k: only the k most likely are drawn, renormalised", "[sampling]") {
    std::vector<float> logits{1.0f, 0.0f, 2.0f, -1.0f, 0.5f};
    SamplingParams p;
    p.top_k = 2;
    CHECK(drawn(logits, p) == std::set<int32_t>{0, 2});
    const int n = 20000;
    auto full = softmax(logits);
    std::vector<double> expected(5, 0.0);
    expected[0] = full[0] / (full[0] + full[2]);
    expected[2] = full[2] / (full[0] + full[2]);
    CHECK(chi_square(histogram(logits, p, n), expected, n) < 10.83);  // df 1, p = 0.001
    p.top_k = 1;
    CHECK(drawn(logits, p) == std::set<int32_t>{2});
    p.top_k = 5;  // the whole vocabulary: off
    CHECK(drawn(logits, p).size() == 5);
}

TEST_CASE("sampling top_k: ties at the cut keep the lower ids", "[sampling]") {
    std::vector<float> logits{1.0f, 2.0f, 2.0f, 2.0f, 0.0f};
    SamplingParams p;
    p.top_k = 2;
    CHECK(drawn(logits, p) == std::set<int32_t>{1, 2});
}

TEST_CASE("sampling top_p: the smallest most-likely set reaching top_p", "[sampling]") {
    auto logits = logits_of({0.5, 0.3, 0.15, 0.05});
    SamplingParams p;
    p.top_p = 0.75f;
    CHECK(drawn(logits, p) == std::set<int32_t>{0, 1});
    p.top_p = 0.85f;
    CHECK(drawn(logits, p) == std::set<int32_t>{0, 1, 2});
    p.top_p = 0.0f;
    CHECK(drawn(logits, p) == std::set<int32_t>{0});
    p.top_p = 0.999f;
    CHECK(drawn(logits, p, 5000) == std::set<int32_t>{0, 1, 2, 3});
}

TEST_CASE("sampling top_p renormalises over what top_k left", "[sampling]") {
    auto logits = logits_of({0.5, 0.3, 0.15, 0.05});
    SamplingParams p;
    p.top_p = 0.6f;
    CHECK(drawn(logits, p) == std::set<int32_t>{0, 1});  // 0.5 < 0.6 of 1.0
    p.top_k = 2;
    CHECK(drawn(logits, p) == std::set<int32_t>{0});  // 0.5 >= 0.6 of 0.8
}

TEST_CASE("sampling min_p: tokens below min_p times the top probability are dropped", "[sampling]") {
    auto logits = logits_of({0.5, 0.3, 0.15, 0.05});
    SamplingParams p;
    p.min_p = 0.5f;  // threshold 0.25
    CHECK(drawn(logits, p) == std::set<int32_t>{0, 1});
    p.min_p = 0.2f;  // threshold 0.1
    CHECK(drawn(logits, p) == std::set<int32_t>{0, 1, 2});
    p.min_p = 5.0f;  // over 1: the top token only
    CHECK(drawn(logits, p) == std::set<int32_t>{0});
    p.min_p = 0.2f;
    p.top_p = 0.75f;  // applied after top_p
    CHECK(drawn(logits, p) == std::set<int32_t>{0, 1});
}

TEST_CASE("sampling truncation matches the sort-everything definition on random rows", "[sampling]") {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0f, 3.0f);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    std::vector<int32_t> survivors;
    for (int round = 0; round < 60; ++round) {
        const size_t vocab = round % 3 == 0 ? 20000 : 300;
        std::vector<float> prob(vocab);
        for (auto& v : prob) v = std::exp(normal(rng) - 12.0f);
        // Some exact ties and some underflowed tokens.
        for (size_t i = 0; i < vocab; i += 17) prob[i] = prob[vocab / 2];
        for (size_t i = 3; i < vocab; i += 29) prob[i] = 0;
        const float mx = *std::max_element(prob.begin(), prob.end());
        for (auto& v : prob) v /= mx;
        SamplingParams s;
        s.top_k = round % 4 == 0 ? 0 : static_cast<int32_t>(1 + rng() % 400);
        s.top_p = round % 5 == 0 ? 1.0f : unit(rng);
        s.min_p = round % 2 == 0 ? 0.0f : unit(rng) * 0.01f;
        CAPTURE(round, s.top_k, s.top_p, s.min_p);
        radiance::sampling::detail::surviving_tokens(prob, s, survivors);
        CHECK(survivors == reference_survivors(prob, s));
    }
}
