// scheduler_build.cpp: which rows the next step carries (Scheduler::build_step).
#include <algorithm>
#include <unordered_set>

#include "radiance/util/log.h"
#include "scheduler.h"
#include "scheduler_request.h"

namespace radiance::frontend {

namespace {

// Room kept in a step for the group's communicator name (WorkerGroup fills it in).
constexpr size_t kCommNameBytes = 256;

// The sampling spec of a request's draw number `draw` (its generated tokens so far, and those of
// outstanding steps: the RNG counter of a fed row counts the token it is fed).
ipc::SampleSpec spec_of(const GenerationRequest& q, uint64_t seed, const std::vector<int32_t>& generated,
                        const std::map<int32_t, int32_t>& counts, int64_t draw) {
    const SamplingParams& s = q.sampling;
    ipc::SampleSpec o;
    o.params = s;
    o.params.seed = seed;
    o.draw = draw;
    if (s.repetition_penalty != 1.0f) {  // HF applies it over prompt and generated tokens
        std::vector<int32_t> seen(q.prompt.begin(), q.prompt.end());
        seen.insert(seen.end(), generated.begin(), generated.end());
        std::sort(seen.begin(), seen.end());
        seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
        o.seen_tokens = std::move(seen);
    }
    if (s.presence_penalty != 0.0f || s.frequency_penalty != 0.0f)
        for (auto& [t, c] : counts) o.gen_counts.push_back({t, c});
    return o;
}

// Structured output: the row's mask from its constraint; false when no token is allowed.
bool constrain(GenerationRequest& q, int64_t vocab, ipc::SampleSpec& spec) {
    if (!q.constraint) return true;
    spec.allowed.assign(static_cast<size_t>((vocab + 31) / 32), 0);
    return q.constraint->allowed(spec.allowed);
}

}  // namespace

bool Scheduler::feedable(const Request& r, const ipc::SampleSpec& spec) const {
    if (!opts_.overlap || !step::needs_only_logits(spec.params)) return false;
    // A constrained row's next mask follows from the token it picks (the constraint hears it
    // first): it is never fed, and joins the step after the one built while its last one runs.
    if (r.req.constraint) return false;
    return spec.params.temperature > 0.0f ? plan_.feeds_sampled : plan_.feeds_greedy;
}

// Builds the next step into m and `sent` (a row per sequence, in batch order). The step stays
// within what the transport carries (group_.step_capacity(), counted exactly as rows are added: a
// row's sampling spec carries its logit_bias, and its prompt for a repetition penalty); a row that
// would overflow it waits, moved to the front so it goes first next step, and a row too large for
// a step of its own is failed (too_large). A sampled row carries its structured-output mask, made
// from its constraint here, so only once the row's last token is known (a constrained row is never
// fed); one whose constraint allows no token is left out and failed (dead_ends).
//
// Rows, decode first: rows of `prev` (the step still running, when there is one) fed from its
// picks, in its out-row order; decode rows whose last token is known; prefill chunks of running
// requests; waiting requests in order.
bool Scheduler::build_step(ipc::StepMessage& m, Sent& sent, const Sent* prev, std::vector<Request*>& too_large,
                           std::vector<Request*>& dead_ends) {
    const int block = plan_.kv_block_size;
    const uint64_t serial = ++built_steps_;
    int budget = opts_.max_batch_tokens;
    auto& b = m.batch;
    b.cu_seqlens = {0};
    auto blocks_for = [&](int64_t tokens) { return (tokens + block - 1) / block; };
    const size_t capacity = group_.step_capacity();
    size_t bytes = ipc::encoded_size(m) + kCommNameBytes, stride = 1;
    bool full = false;  // a row did not fit: nothing more this step
    auto room = [&] { return budget > 0 && !full && static_cast<int>(sent.rows.size()) < opts_.max_seqs; };
    // Adds `n` tokens of r from position `from` if they fit; false (and `full`) if not. A fed row
    // (fed_from >= 0) is r's token from out row fed_from of prev, at position len().
    auto add = [&](Request* r, int64_t from, int64_t n, int32_t fed_from) -> bool {
        const bool fed = fed_from >= 0;
        // An embedding request samples nothing: its rows' hidden states come back instead (the
        // last prompt row, or every row for a mean)
        const bool embeds = r->req.embed.has_value();
        const bool samples = !embeds && (fed || from + n == r->len());
        const int64_t hidden = !embeds ? 0 : *r->req.embed == Pooling::Mean ? n : from + n == r->len() ? 1 : 0;
        ipc::SampleSpec spec;
        if (samples) spec = spec_of(r->req, r->seed, r->generated, r->gen_counts, static_cast<int64_t>(r->generated.size()) + r->pending);
        if (samples && !fed && !constrain(r->req, plan_.vocab, spec)) {
            dead_ends.push_back(r);
            return false;
        }
        const size_t row_bytes = static_cast<size_t>(n) * ipc::kStepTokenBytes + ipc::kStepRowBytes +
                                 (samples ? ipc::encoded_size(spec) : 0) + (fed ? ipc::kStepFedBytes : 0) + static_cast<size_t>(hidden) * 4;
        const size_t w = std::max(stride, r->blocks.size());
        if (bytes + row_bytes + w * (sent.rows.size() + 1) * 4 > capacity) {
            full = true;
            if (sent.rows.empty())
                too_large.push_back(r);
            else if (auto it = std::find(running_.begin(), running_.end(), r); it != running_.end())
                std::rotate(running_.begin(), it, it + 1);
            return false;
        }
        bytes += row_bytes;
        stride = w;
        for (int64_t i = from; i < from + n; ++i) {
            b.tokens.push_back(fed ? 0 : r->tokens[static_cast<size_t>(i)]);  // a fed row's is a placeholder
            b.positions.push_back(static_cast<int32_t>(i));
        }
        if (fed) m.fed_from.push_back(fed_from);
        for (int64_t k = static_cast<int64_t>(b.tokens.size()) - hidden; k < static_cast<int64_t>(b.tokens.size()); ++k)
            b.hidden_ids.push_back(static_cast<int32_t>(k));
        b.cu_seqlens.push_back(static_cast<int32_t>(b.tokens.size()));
        b.seq_ids.push_back(static_cast<int32_t>(r->id & 0x7fffffff));
        bool picked = false;
        if (samples) {
            b.out_ids.push_back(static_cast<int32_t>(b.tokens.size() - 1));
            picked = feedable(*r, spec);
            m.samples.push_back(std::move(spec));
        }
        r->in_flight++;
        r->queued += n;
        r->pending += samples ? 1 : 0;
        r->step_serial = serial;
        if (r->first_scheduled == std::chrono::steady_clock::time_point{}) r->first_scheduled = std::chrono::steady_clock::now();
        sent.rows.push_back({r, static_cast<int32_t>(n), samples, picked, static_cast<int32_t>(hidden)});
        sent.tokens += static_cast<int>(n);
        budget -= static_cast<int>(n);
        return true;
    };
    // Blocks for `tokens` of r, preempting the newest request no step holds while they are short.
    auto grow = [&](Request* r, int64_t tokens) {
        while (!blocks_.grow(r->blocks, blocks_for(tokens))) {
            const size_t before = running_.size();
            preempt_newest(r);
            if (running_.size() == before) return false;
        }
        return true;
    };
    // Rows of the running step continue, fed from its picks, in its out-row order (fed rows are
    // the step's first token rows). One whose pending token is its last (max_tokens, the context)
    // stops there; one that stops by a stop token there rides this step as a zombie.
    if (prev) {
        if (prev->discard) return false;  // its rows are undone when it is answered: nothing follows it
        int32_t out = 0;
        for (const Sent::Row& row : prev->rows) {
            if (!row.samples) continue;
            const int32_t j = out++;
            Request* r = row.r;
            if (!row.picked || r->zombie || r->cancelled || r->pending != 1 || r->next_pos() != r->len() || !room()) continue;
            if (static_cast<int64_t>(r->generated.size()) + 1 >= r->req.max_tokens || r->len() + 1 >= max_ctx_.load()) continue;
            if (!grow(r, r->len() + 1)) continue;  // sits this step out
            add(r, r->len(), 1, j);
        }
        // Nothing fed: the running step's answer comes first (lockstep).
        if (m.fed_from.empty()) return false;
    }
    // Decode rows whose last token is known.
    for (size_t i = 0; i < running_.size() && room(); ++i) {
        Request* r = running_[i];
        if (r->pending || r->step_serial == serial || r->next_pos() != r->len() - 1) continue;
        if (!grow(r, r->len())) continue;  // waits for blocks
        add(r, r->len() - 1, 1, -1);
    }
    b.n_seq_decode = static_cast<int32_t>(sent.rows.size());
    // Then prefill chunks: running sequences mid-prefill, then new arrivals in order.
    auto prefill = [&](Request* r) -> bool {
        if (!room()) return false;
        const int64_t from = r->next_pos();
        const int64_t chunk = std::min<int64_t>(r->len() - from, budget);
        if (chunk <= 0) return true;
        if (!blocks_.grow(r->blocks, blocks_for(from + chunk))) return false;
        return add(r, from, chunk, -1);
    };
    for (size_t i = 0; i < running_.size(); ++i)
        if (Request* r = running_[i]; !r->pending && r->step_serial != serial && r->next_pos() < r->len() - 1) prefill(r);
    // Full blocks running requests are prefilling and have not published yet (built when first
    // asked): a waiting request whose next uncached block is one of them waits for it.
    std::unordered_set<uint64_t> in_flight;
    bool in_flight_known = false;
    auto note_in_flight = [&](const Request& r) {
        for (size_t k = static_cast<size_t>(r.cached.blocks); k < r.block_hashes.size(); ++k) in_flight.insert(r.block_hashes[k]);
    };
    auto next_block_in_flight = [&](const Request& r) {
        if (!opts_.prefix_caching || r.req.embed == Pooling::Mean || r.cached.blocks >= (r.len() - 1) / block) return false;
        if (!in_flight_known) {
            for (const Request* q : running_)
                if (q->computed < q->len() - 1) note_in_flight(*q);
            in_flight_known = true;
        }
        return in_flight.count(r.block_hashes[static_cast<size_t>(r.cached.blocks)]) > 0;
    };
    // Waiting requests in order, each starting from the longest run of cached blocks it begins
    // with; one waiting for an in-flight block is passed over (it holds nothing meanwhile).
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        Request* r = *it;
        if (!room()) break;
        share_cached_prefix(*r);
        if (next_block_in_flight(*r)) {
            drop_kv(*r);
            ++it;
            continue;
        }
        if (!prefill(r)) {  // one too large stays queued: the caller fails it (retire takes it off)
            drop_kv(*r);
            break;
        }
        if (opts_.prefix_caching && !r->lookup_counted) {
            r->lookup_counted = true;
            stats_.prefix_cache_queries += r->len();
            stats_.prefix_cache_hits += r->computed;
            if (observer_) observer_->on_prefix_cache(r->len(), r->computed);
        }
        if (in_flight_known) note_in_flight(*r);
        it = waiting_.erase(it);
        running_.push_back(r);
    }
    if (sent.rows.empty()) return false;
    // Block tables: one row per sequence, as wide as the widest (`stride`, kept by add()).
    b.block_table_stride = static_cast<int32_t>(stride);
    for (const Sent::Row& row : sent.rows) {
        const auto& blocks = row.r->blocks;
        for (size_t k = 0; k < stride; ++k) b.block_tables.push_back(k < blocks.size() ? blocks[k] : blocks[0]);
    }
    return true;
}

void Scheduler::preempt_newest(Request* keep) {
    for (auto it = running_.rbegin(); it != running_.rend(); ++it) {
        Request* v = *it;
        if (v == keep || v->in_flight) continue;  // an outstanding step writes its blocks
        drop_kv(*v);
        running_.erase(std::next(it).base());
        waiting_.push_front(v);
        stats_.preemptions++;
        if (observer_) observer_->on_preemption();
        log::debug("preempted request ", v->id, " (recompute)");
        return;
    }
}

}  // namespace radiance::frontend
