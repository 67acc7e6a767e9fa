#include "fake_ranks.h"

#include "radiance/util/error.h"

namespace scheduler_test {

radiance::ipc::ResultMessage FakeRanks::step(const radiance::ipc::StepMessage& m) {
    if (radiance::ipc::encode(m).size() > capacity_) throw radiance::frontend::StepTooLarge("step over capacity");
    if (before_step) before_step(m);
    std::lock_guard<std::mutex> lk(mu_);
    ++steps;
    const auto& b = m.batch;
    const int bs = plan_.kv_block_size;
    const int64_t n_seq = static_cast<int64_t>(b.cu_seqlens.size()) - 1;
    if (n_seq > max_rows) max_rows = n_seq;
    auto slot = [&](int64_t s, int32_t pos) -> int64_t {
        const int32_t k = pos / bs;
        if (k >= b.block_table_stride) throw radiance::Error("position past the block table");
        const int32_t block = b.block_tables[static_cast<size_t>(s * b.block_table_stride + k)];
        if (block < 0 || block >= plan_.kv_blocks) throw radiance::Error("block id outside the cache");
        return static_cast<int64_t>(block) * bs + pos % bs;
    };
    for (int64_t s = 0; s < n_seq; ++s)
        for (int32_t i = b.cu_seqlens[s]; i < b.cu_seqlens[s + 1]; ++i) kv_[slot(s, b.positions[i])] = b.tokens[i];
    radiance::ipc::ResultMessage r;
    r.step_id = m.step_id;
    for (size_t k = 0; k < b.out_ids.size(); ++k) {
        const int32_t row = b.out_ids[k];
        int64_t s = 0;
        while (b.cu_seqlens[s + 1] <= row) ++s;
        std::vector<int32_t> context;
        for (int32_t p = 0; p <= b.positions[row]; ++p) {
            auto it = kv_.find(slot(s, p));
            context.push_back(it == kv_.end() ? -1 : it->second);
        }
        int32_t t = next_token(context, plan_.vocab);
        // structured output's mask: the first allowed token from the model's own, cyclically
        if (k < m.samples.size() && !m.samples[k].allowed.empty()) {
            const auto& a = m.samples[k].allowed;
            for (int64_t d = 0; d < plan_.vocab; ++d) {
                const auto c = static_cast<int32_t>((t + d) % plan_.vocab);
                if ((a[static_cast<size_t>(c) >> 5] >> (c & 31)) & 1u) {
                    t = c;
                    break;
                }
            }
        }
        r.tokens.push_back({t, 0.0f, {}});
    }
    return r;
}

}  // namespace scheduler_test
