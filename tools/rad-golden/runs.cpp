#include "runs.h"

#include <algorithm>

namespace radiance::golden {
namespace {

size_t decode_steps(const Prompt& p, Feed feed) {
    if (feed == Feed::teacher) return p.fed.size();
    return p.greedy.empty() ? 0 : p.greedy.size() - 1;
}

// Blocks a sequence owns: enough for its prompt, its continuation and one more position.
int32_t table_stride(const Stepper& st, const std::vector<const Prompt*>& ps) {
    size_t longest = 0;
    for (auto* p : ps) longest = std::max(longest, p->ids.size() + p->greedy.size() + 1);
    return static_cast<int32_t>((longest + st.block - 1) / st.block);
}

void add_table(engine::StepBatch& b, size_t seq, int32_t stride) {
    for (int32_t x = 0; x < stride; ++x) b.block_tables.push_back(static_cast<int32_t>(seq) * stride + x);
    b.block_table_stride = stride;
}

// One decode row of sequence `s`: `token` at `pos`.
void add_decode_row(engine::StepBatch& b, size_t s, int32_t token, size_t pos, int32_t stride) {
    if (b.cu_seqlens.empty()) b.cu_seqlens.push_back(0);
    b.tokens.push_back(token);
    b.positions.push_back(static_cast<int32_t>(pos));
    b.out_ids.push_back(static_cast<int32_t>(b.tokens.size() - 1));
    b.cu_seqlens.push_back(static_cast<int32_t>(b.tokens.size()));
    b.seq_ids.push_back(static_cast<int32_t>(s));
    b.n_seq_decode++;
    add_table(b, s, stride);
}

void append_row(std::vector<float>& to, const std::vector<float>& lg, size_t row, int64_t V) {
    to.insert(to.end(), lg.begin() + static_cast<int64_t>(row) * V, lg.begin() + static_cast<int64_t>(row + 1) * V);
}

// Picked decode steps of every sequence queued on the card, each fed the tokens the card picked
// in the step before (as a server's overlapped scheduler would run them).
void decode_pipelined(const Stepper& st, const std::vector<const Prompt*>& ps, size_t steps, int32_t stride, Run& r) {
    engine::Engine& e = *st.pipelined;
    std::vector<engine::CardDraw> draws(ps.size());
    for (auto& d : draws) d.on_card = true;
    auto batch = [&](size_t t, bool placeholders) {
        engine::StepBatch b;
        for (size_t s = 0; s < ps.size(); ++s) add_decode_row(b, s, placeholders ? -1 : r.tokens[s].back(), ps[s]->ids.size() + t, stride);
        return b;
    };
    e.enqueue(batch(0, false), draws, 0);
    for (size_t t = 0; t < steps; ++t) {
        if (t + 1 < steps) e.enqueue(batch(t + 1, true), draws, static_cast<int32_t>(ps.size()));
        std::vector<int32_t> toks;
        e.collect(toks);
        for (size_t s = 0; s < ps.size(); ++s) r.tokens[s].push_back(toks.at(s));
    }
    r.was_pipelined = true;
}

}  // namespace

int argmax(const float* v, int64_t n) {
    int best = 0;
    for (int64_t i = 1; i < n; ++i)
        if (v[i] > v[best]) best = static_cast<int>(i);
    return best;
}

Run run_together(const Stepper& st, const std::vector<const Prompt*>& ps, Feed feed) {
    const int64_t V = st.vocab;
    const int32_t stride = table_stride(st, ps);
    const bool picked = feed == Feed::picked;
    Run r;
    r.logits.resize(ps.size());
    r.decode_logits.resize(ps.size());
    r.tokens.resize(ps.size());
    engine::StepBatch pre;
    pre.cu_seqlens.push_back(0);
    for (size_t s = 0; s < ps.size(); ++s) {
        const auto& ids = ps[s]->ids;
        for (size_t i = 0; i < ids.size(); ++i) {
            if (!picked || i + 1 == ids.size()) pre.out_ids.push_back(static_cast<int32_t>(pre.tokens.size()));
            pre.tokens.push_back(ids[i]);
            pre.positions.push_back(static_cast<int32_t>(i));
        }
        pre.cu_seqlens.push_back(static_cast<int32_t>(pre.tokens.size()));
        pre.seq_ids.push_back(static_cast<int32_t>(s));
        add_table(pre, s, stride);
    }
    if (picked) {
        std::vector<int32_t> toks;
        st.greedy(pre, toks);
        for (size_t s = 0; s < ps.size(); ++s) r.tokens[s].push_back(toks.at(s));
    } else {
        std::vector<float> lg;
        st.logits(pre, lg);
        for (size_t s = 0; s < ps.size(); ++s) {
            const size_t first = static_cast<size_t>(pre.cu_seqlens[s]), len = ps[s]->ids.size();
            r.logits[s].assign(lg.begin() + static_cast<int64_t>(first) * V, lg.begin() + static_cast<int64_t>(first + len) * V);
            r.tokens[s].push_back(argmax(&lg[(first + len - 1) * V], V));
        }
    }
    size_t steps = 0;
    bool same_steps = true;
    for (auto* p : ps) {
        same_steps = same_steps && decode_steps(*p, feed) == decode_steps(*ps[0], feed);
        steps = std::max(steps, decode_steps(*p, feed));
    }
    if (picked && st.pipelined && same_steps && steps > 0) {
        decode_pipelined(st, ps, steps, stride, r);
        return r;
    }
    for (size_t t = 0; t < steps; ++t) {
        engine::StepBatch dec;
        std::vector<size_t> rows;  // the sequences still decoding, in row order
        for (size_t s = 0; s < ps.size(); ++s) {
            if (t >= decode_steps(*ps[s], feed)) continue;
            const int32_t token = feed == Feed::teacher ? ps[s]->fed[t] : r.tokens[s].back();
            add_decode_row(dec, s, token, ps[s]->ids.size() + t, stride);
            rows.push_back(s);
        }
        if (picked) {
            std::vector<int32_t> toks;
            st.greedy(dec, toks);
            for (size_t k = 0; k < rows.size(); ++k) r.tokens[rows[k]].push_back(toks.at(k));
            continue;
        }
        std::vector<float> lg;
        st.logits(dec, lg);
        for (size_t k = 0; k < rows.size(); ++k) {
            append_row(r.decode_logits[rows[k]], lg, k, V);
            r.tokens[rows[k]].push_back(argmax(&lg[k * V], V));
        }
    }
    return r;
}

Run run_mixed(const Stepper& st, const std::vector<const Prompt*>& ps, Feed feed, size_t chunk) {
    const int64_t V = st.vocab;
    const int32_t stride = table_stride(st, ps);
    const bool picked = feed == Feed::picked;
    struct Seq {
        size_t prefilled = 0, decoded = 0;
        bool started = false;
    };
    std::vector<Seq> seqs(ps.size());
    Run r;
    r.logits.resize(ps.size());
    r.decode_logits.resize(ps.size());
    r.tokens.resize(ps.size());
    for (size_t step = 0;; ++step) {
        if (step < ps.size()) seqs[step].started = true;
        engine::StepBatch b;
        b.cu_seqlens.push_back(0);
        struct Row {
            size_t seq, outs;
            bool decode;
        };
        std::vector<Row> rows;  // in batch order: decode rows first
        for (size_t s = 0; s < ps.size(); ++s) {
            const Prompt& p = *ps[s];
            if (!seqs[s].started || seqs[s].prefilled < p.ids.size() || seqs[s].decoded >= decode_steps(p, feed)) continue;
            const int32_t token = feed == Feed::teacher ? p.fed[seqs[s].decoded] : r.tokens[s].back();
            add_decode_row(b, s, token, p.ids.size() + seqs[s].decoded, stride);
            rows.push_back({s, 1, true});
        }
        for (size_t s = 0; s < ps.size(); ++s) {
            const Prompt& p = *ps[s];
            if (!seqs[s].started || seqs[s].prefilled >= p.ids.size()) continue;
            const size_t from = seqs[s].prefilled, to = std::min(p.ids.size(), from + chunk);
            for (size_t i = from; i < to; ++i) {
                if (!picked || i + 1 == to) b.out_ids.push_back(static_cast<int32_t>(b.tokens.size()));
                b.tokens.push_back(p.ids[i]);
                b.positions.push_back(static_cast<int32_t>(i));
            }
            b.cu_seqlens.push_back(static_cast<int32_t>(b.tokens.size()));
            b.seq_ids.push_back(static_cast<int32_t>(s));
            add_table(b, s, stride);
            rows.push_back({s, picked ? 1 : to - from, false});
        }
        if (rows.empty()) break;
        std::vector<float> lg;
        std::vector<int32_t> toks;
        if (picked)
            st.greedy(b, toks);
        else
            st.logits(b, lg);
        size_t out = 0;
        for (size_t k = 0; k < rows.size(); ++k) {
            const Row& row = rows[k];
            Seq& q = seqs[row.seq];
            const size_t last = out + row.outs - 1;
            if (row.decode) {
                q.decoded++;
                if (!picked) append_row(r.decode_logits[row.seq], lg, last, V);
            } else {
                for (size_t i = 0; !picked && i < row.outs; ++i) append_row(r.logits[row.seq], lg, out + i, V);
                q.prefilled += static_cast<size_t>(b.cu_seqlens[k + 1] - b.cu_seqlens[k]);
            }
            if (row.decode || q.prefilled == ps[row.seq]->ids.size())
                r.tokens[row.seq].push_back(picked ? toks.at(last) : argmax(&lg[last * V], V));
            out += row.outs;
        }
    }
    return r;
}

}  // namespace radiance::golden
