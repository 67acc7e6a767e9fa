#include "bitwise.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace radiance::golden {
namespace {

// The prompt with tokens to feed: its decode references' where it has them, else its greedy
// continuation but the last (whose successor no reference holds).
Prompt with_feed(const Prompt& p) {
    Prompt q = p;
    if (q.fed.empty() && q.greedy.size() > 1) q.fed.assign(q.greedy.begin(), q.greedy.end() - 1);
    return q;
}

BitwiseVerdict compare(const std::string& what, const std::vector<float>& a, const std::vector<float>& b, int64_t V, size_t first_pos) {
    BitwiseVerdict v;
    if (a.size() != b.size()) {
        v.ok = false;
        v.line = what + ": " + std::to_string(a.size() / V) + " rows against " + std::to_string(b.size() / V);
        return v;
    }
    const size_t rows = a.size() / static_cast<size_t>(V);
    size_t differ = 0, first = 0;
    double worst = 0;
    for (size_t r = 0; r < rows; ++r) {
        const float* x = a.data() + r * V;
        const float* y = b.data() + r * V;
        if (std::memcmp(x, y, sizeof(float) * static_cast<size_t>(V)) == 0) continue;
        if (differ++ == 0) first = r;
        for (int64_t j = 0; j < V; ++j) worst = std::max(worst, std::fabs(static_cast<double>(x[j]) - y[j]));
    }
    char buf[256];
    if (differ == 0) {
        std::snprintf(buf, sizeof buf, "%s: %zu rows bitwise equal", what.c_str(), rows);
    } else {
        v.ok = false;
        std::snprintf(buf, sizeof buf, "%s: %zu of %zu rows differ, the first at position %zu, largest |d| %.3g", what.c_str(), differ, rows,
                      first_pos + first, worst);
    }
    v.line = buf;
    return v;
}

}  // namespace

void bitwise_probe(const Stepper& st, const std::vector<Prompt>& prompts, const std::function<void(const BitwiseVerdict&)>& report) {
    const int64_t V = st.vocab;
    std::vector<Prompt> fed;
    for (const auto& p : prompts) fed.push_back(with_feed(p));
    std::vector<const Prompt*> all;
    for (const auto& p : fed) all.push_back(&p);
    const Run batched = run_together(st, all, Feed::teacher);
    const Run mixed = run_mixed(st, all, Feed::teacher, 5);
    for (size_t s = 0; s < fed.size(); ++s) {
        const Prompt& p = fed[s];
        const Run alone = run_together(st, {&p}, Feed::teacher);
        const size_t n = p.ids.size();
        const std::string who = "bitwise " + p.name;
        report(compare(who + " prompt, batched against alone", batched.logits[s], alone.logits[0], V, 0));
        report(compare(who + " decode, batched against alone", batched.decode_logits[s], alone.decode_logits[0], V, n));
        report(compare(who + " prompt, chunked by 5 beside decode rows against alone", mixed.logits[s], alone.logits[0], V, 0));
        report(compare(who + " decode, mixed against alone", mixed.decode_logits[s], alone.decode_logits[0], V, n));
        // Recomputed: the prompt and every fed token prefilled in one step; its rows from n on are
        // the decode steps' positions.
        Prompt r = p;
        r.ids.insert(r.ids.end(), p.fed.begin(), p.fed.end());
        r.fed.clear();
        const Run again = run_together(st, {&r}, Feed::teacher);
        const std::vector<float> tail(again.logits[0].begin() + static_cast<int64_t>(n) * V, again.logits[0].end());
        report(compare(who + " decode, recomputed by one prefill against decoded", tail, alone.decode_logits[0], V, n));
    }
}

}  // namespace radiance::golden
