#include "fake_ranks.h"

#include <set>
#include <string>

#include "radiance/util/error.h"

namespace scheduler_test {

namespace {

// The blocks step m writes for sequence s, or (reads) every block of its context.
std::set<int32_t> blocks_of(const radiance::ipc::StepMessage& m, int64_t s, int bs, bool written_only) {
    const auto& b = m.batch;
    std::set<int32_t> out;
    const int32_t first = written_only ? b.positions[static_cast<size_t>(b.cu_seqlens[s])] : 0;
    const int32_t last = b.positions[static_cast<size_t>(b.cu_seqlens[s + 1] - 1)];
    for (int32_t k = first / bs; k <= last / bs && k < b.block_table_stride; ++k)
        out.insert(b.block_tables[static_cast<size_t>(s * b.block_table_stride + k)]);
    return out;
}

}  // namespace

void FakeRanks::send(radiance::ipc::StepMessage m) {
    if (radiance::ipc::encode(m).size() > capacity_) throw radiance::frontend::StepTooLarge("step over capacity");
    if (!ready_) throw radiance::frontend::RankLost(0, "rank 0 is down");
    std::lock_guard<std::mutex> lk(mu_);
    if (outstanding_.size() >= 2) throw radiance::Error("two steps are outstanding already");
    // A block this step writes must not be one an outstanding step reads for another sequence
    // (a finished request's blocks go back only once its last step is answered).
    const int bs = plan_.kv_block_size;
    for (size_t s = 0; s + 1 < m.batch.cu_seqlens.size(); ++s)
        for (int32_t w : blocks_of(m, static_cast<int64_t>(s), bs, true))
            for (const auto& o : outstanding_)
                for (size_t t = 0; t + 1 < o.batch.cu_seqlens.size(); ++t)
                    if (o.batch.seq_ids[t] != m.batch.seq_ids[s] && blocks_of(o, static_cast<int64_t>(t), bs, false).count(w))
                        throw radiance::Error("a step writes block " + std::to_string(w) +
                                              ", which an outstanding step reads for another sequence");
    if (!outstanding_.empty()) ++overlapped;
    m.step_id = ++step_seq_;
    outstanding_.push_back(std::move(m));
}

radiance::ipc::ResultMessage FakeRanks::receive() {
    radiance::ipc::StepMessage m;
    {
        std::lock_guard<std::mutex> lk(mu_);
        if (outstanding_.empty()) throw radiance::Error("no step is outstanding");
        m = std::move(outstanding_.front());
        outstanding_.pop_front();
        behind = static_cast<int>(outstanding_.size());
        // Fed rows take what the step before picked, as a worker's card feeds them.
        const bool follows = last_ran_ != 0 && last_ran_ + 1 == m.step_id;
        last_ran_ = 0;
        if (!m.fed_from.empty() && !follows) throw radiance::Error("a fed step that does not follow the step that ran");
        for (size_t i = 0; i < m.fed_from.size(); ++i) {
            const auto src = static_cast<size_t>(m.fed_from[i]);
            if (src >= last_picks_.size()) throw radiance::Error("a row fed from an out row the step before did not have");
            // A fed row's mask would have been made before the token it follows was known.
            if (i < m.samples.size() && !m.samples[i].allowed.empty())
                throw radiance::Error("a fed row carries a structured-output mask made before its last token was known");
            m.batch.tokens[i] = last_picks_[src];
            ++fed_rows;
        }
    }
    try {
        if (before_step) before_step(m);
    } catch (const radiance::frontend::RankLost&) {
        std::lock_guard<std::mutex> lk(mu_);
        outstanding_.clear();  // lost with the rank
        throw;
    }
    radiance::ipc::ResultMessage r = run(m);
    std::lock_guard<std::mutex> lk(mu_);
    last_ran_ = m.step_id;
    last_picks_.clear();
    for (const auto& t : r.tokens) last_picks_.push_back(t.token);
    return r;
}

radiance::ipc::ResultMessage FakeRanks::run(const radiance::ipc::StepMessage& m) {
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
    auto context_of = [&](int32_t row) {
        int64_t s = 0;
        while (b.cu_seqlens[s + 1] <= row) ++s;
        std::vector<int32_t> context;
        for (int32_t p = 0; p <= b.positions[row]; ++p) {
            auto it = kv_.find(slot(s, p));
            context.push_back(it == kv_.end() ? -1 : it->second);
        }
        return context;
    };
    if (!b.hidden_ids.empty()) r.hidden_width = hidden_width;
    for (int32_t row : b.hidden_ids)
        for (float x : hidden_of(context_of(row), hidden_width, plan_.vocab)) r.hidden.push_back(x);
    for (size_t o = 0; o < b.out_ids.size(); ++o) {
        const int32_t row = b.out_ids[o];
        int64_t s = 0;
        while (b.cu_seqlens[s + 1] <= row) ++s;
        std::vector<int32_t> context;
        for (int32_t p = 0; p <= b.positions[row]; ++p) {
            auto it = kv_.find(slot(s, p));
            context.push_back(it == kv_.end() ? -1 : it->second);
        }
        const radiance::ipc::SampleSpec* spec = o < m.samples.size() ? &m.samples[o] : nullptr;
        const bool sampled = spec && spec->params.temperature > 0.0f;
        int32_t t =
            sampled ? drawn_token(context, spec->params.seed.value_or(0), spec->draw, plan_.vocab) : next_token(context, plan_.vocab);
        // structured output's mask: the first allowed token from the model's own, cyclically
        if (spec && !spec->allowed.empty()) {
            const auto& a = spec->allowed;
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
