#include "synthetic.h"

#include <string>

namespace radiance::golden {

std::vector<Prompt> synthetic_prompts(int64_t vocab) {
    uint64_t s = 0x2545F4914F6CDD1DULL;  // fixed: every run probes the same ids
    auto next = [&] {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;  // xorshift64
        return static_cast<int32_t>(s % static_cast<uint64_t>(vocab));
    };
    std::vector<Prompt> out;
    for (const int n : {3, 7, 11, 17, 29, 40}) {
        Prompt p;
        p.name = "synthetic" + std::to_string(n);
        for (int i = 0; i < n; ++i) p.ids.push_back(next());
        for (int i = 0; i < 13; ++i) p.greedy.push_back(next());
        out.push_back(std::move(p));
    }
    return out;
}

}  // namespace radiance::golden
