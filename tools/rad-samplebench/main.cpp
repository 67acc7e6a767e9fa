// rad-samplebench [--reps N]: the host sampler's cost per row (radiance::sampling, what the worker
// runs for rows whose logits come back: every row of a host plan, rows with penalties, bias or
// logprobs on a card). Random logits (normal, sd 3: a realistic spread), each vocabulary size of
// the project's tokenizers, each kind of setting; prints microseconds per row.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "radiance/sampling/sampler.h"

using namespace radiance::sampling;

int main(int argc, char** argv) {
    int reps = 30;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
            reps = std::atoi(argv[++i]);
        else {
            std::fprintf(stderr, "usage: rad-samplebench [--reps N]\n");
            return 2;
        }
    }
    struct Setting {
        const char* name;
        float temperature, top_p, min_p;
        int top_k;
    };
    const Setting settings[] = {{"greedy", 0.0f, 1.0f, 0.0f, 0},
                                {"temperature 1", 1.0f, 1.0f, 0.0f, 0},
                                {"top_p 0.9", 1.0f, 0.9f, 0.0f, 0},
                                {"top_k 40, top_p 0.95", 0.8f, 0.95f, 0.0f, 40},
                                {"min_p 0.05", 1.0f, 1.0f, 0.05f, 0}};
    std::printf("%-24s %10s %12s\n", "setting", "vocab", "us/row");
    for (int vocab : {32000, 128256, 151936}) {
        std::mt19937 rng(static_cast<unsigned>(vocab));
        std::normal_distribution<float> normal(0.0f, 3.0f);
        std::vector<float> x(static_cast<size_t>(vocab));
        for (float& v : x) v = normal(rng);
        Sampler sampler;
        for (const Setting& st : settings) {
            SamplingParams p;
            p.temperature = st.temperature;
            p.top_p = st.top_p;
            p.min_p = st.min_p;
            p.top_k = st.top_k;
            p.seed = 7;
            int64_t check = 0;  // keeps the draws from being optimised away
            sampler.sample(x, p, {}, 0);
            const auto a = std::chrono::steady_clock::now();
            for (int r = 0; r < reps; ++r) check += sampler.sample(x, p, {}, static_cast<uint64_t>(r)).token;
            const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - a).count() / reps;
            std::printf("%-24s %10d %12.1f%s\n", st.name, vocab, us, check < 0 ? "?" : "");
        }
    }
    return 0;
}
