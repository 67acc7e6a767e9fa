// engine_step.cpp: a step through the engine's public door.
// One job: queue_step checks a batch against the plan before anything is staged (token, sequence
// and out-row counts, positions that run on inside the plan's context, block ids inside the
// cache), decides which out rows are picked on the card and by which op, and hands the step to
// the host's architecture or to run_on_device; step() waits for it and returns the logits and
// picked tokens, enqueue() / collect() keep up to two steps queued for pipelined decode.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "engine_impl.h"
#include "radiance/util/error.h"

namespace radiance::engine {

using detail::elem_bytes;

void Engine::step(const StepBatch& in, std::vector<float>& logits) {
    std::vector<int32_t> none;
    step(in, logits, {}, none);
}

namespace {
using Clock = std::chrono::steady_clock;
double micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
}  // namespace

// Checks the step, stages its inputs in the next slot and queues its work on the card (on the
// host: runs it and fills `logits`). Returns which out rows get their token picked on the card;
// the logits of the others are queued to come back to logits_h. With every_row_picked a step
// whose rows cannot all be picked there is refused before anything is staged. Token row i <
// fed_from.size() takes the token the card picked for the previous step's out row fed_from[i].
std::vector<uint8_t> Engine::Impl::queue_step(const StepBatch& in, std::vector<float>& logits, const std::vector<CardDraw>& draws,
                                              std::span<const int32_t> fed_from, bool every_row_picked) {
    Impl& m = *this;
    const auto t_enter = Clock::now();
    const int64_t n_tok = static_cast<int64_t>(in.tokens.size());
    const int64_t n_seq = static_cast<int64_t>(in.cu_seqlens.size()) - 1;
    auto bad = [](const std::string& s) { throw Error("bad step: " + s); };
    if (n_tok <= 0 || n_tok > m.opts.max_tok) bad(std::to_string(n_tok) + " tokens (at most " + std::to_string(m.opts.max_tok) + ")");
    if (in.positions.size() != in.tokens.size()) bad("positions and tokens differ in length");
    if (n_seq <= 0 || n_seq > m.opts.max_seqs || in.cu_seqlens[0] != 0 || in.cu_seqlens[n_seq] != n_tok)
        bad("cu_seqlens must run from 0 to the token count over 1.." + std::to_string(m.opts.max_seqs) + " sequences");
    for (int64_t s = 0; s < n_seq; ++s)
        if (in.cu_seqlens[s + 1] <= in.cu_seqlens[s]) bad("sequence " + std::to_string(s) + " has no tokens");
    if (static_cast<int64_t>(in.out_ids.size()) > m.max_out) bad("more logits rows than the plan holds");
    for (int32_t o : in.out_ids)
        if (o < 0 || o >= n_tok) bad("out id " + std::to_string(o) + " outside the step");
    m.hidden_last.clear();
    if (!in.hidden_ids.empty()) {
        if (m.decl.pooled == RAD_NULL_HANDLE)
            bad("hidden rows asked of an architecture that declares no pooled output (rad_declare_pooled): it serves no embeddings");
        if (m.dev && every_row_picked) bad("hidden rows in a pipelined step (their rows come back with Engine::step's answer)");
        if (static_cast<int64_t>(in.hidden_ids.size()) > m.pooled_cap)
            bad(std::to_string(in.hidden_ids.size()) + " hidden rows (the plan holds " + std::to_string(m.pooled_cap) + ")");
        for (int32_t o : in.hidden_ids)
            if (o < 0 || o >= n_tok) bad("hidden id " + std::to_string(o) + " outside the step");
    }
    const int64_t stride = in.block_table_stride;
    if (!m.decl.kv_groups.empty()) {
        if (stride <= 0 || static_cast<int64_t>(in.block_tables.size()) != stride * n_seq) bad("block tables do not match");
        for (int32_t b : in.block_tables)
            if (b < 0 || b >= m.blocks) bad("block id " + std::to_string(b) + " outside the cache");
    }
    if (!in.seq_ids.empty() && static_cast<int64_t>(in.seq_ids.size()) != n_seq) bad("seq_ids do not match the sequences");
    if (in.n_seq_decode < 0 || in.n_seq_decode > n_seq)
        bad(std::to_string(in.n_seq_decode) + " decode sequences of " + std::to_string(n_seq));
    std::vector<int32_t> q_lens(static_cast<size_t>(n_seq)), ctx_lens(static_cast<size_t>(n_seq));
    int32_t max_q = 0, max_ctx = 0;
    for (int64_t s = 0; s < n_seq; ++s) {
        q_lens[s] = in.cu_seqlens[s + 1] - in.cu_seqlens[s];
        // A sequence's tokens sit at consecutive positions that end its context (kernels index the
        // KV cache and the block table by position): anything else would write outside them.
        const int32_t first = in.positions[in.cu_seqlens[s]];
        if (first < 0 || static_cast<int64_t>(first) + q_lens[s] > m.opts.max_ctx)
            bad("sequence " + std::to_string(s) + " reaches position " + std::to_string(static_cast<int64_t>(first) + q_lens[s] - 1) +
                ": a context longer than the plan's " + std::to_string(m.opts.max_ctx) + " (or a negative position)");
        for (int32_t i = 1; i < q_lens[s]; ++i)
            if (in.positions[in.cu_seqlens[s] + i] != first + i)
                bad("sequence " + std::to_string(s) + "'s positions do not run on one at a time from " + std::to_string(first));
        ctx_lens[s] = first + q_lens[s];
        if (s < in.n_seq_decode && q_lens[s] != 1) bad("decode sequence " + std::to_string(s) + " has more than one token");
        if (stride > 0 && (ctx_lens[s] + m.block - 1) / m.block > stride)
            bad("sequence " + std::to_string(s) + " outgrows its block table");
        max_q = std::max(max_q, q_lens[s]);
        max_ctx = std::max(max_ctx, ctx_lens[s]);
    }
    RadBatch b{};
    b.struct_size = sizeof b;
    b.n_tok = static_cast<int32_t>(n_tok);
    b.n_seq = static_cast<int32_t>(n_seq);
    b.n_seq_decode = in.n_seq_decode;
    b.phase = in.n_seq_decode == n_seq ? RAD_PHASE_DECODE : in.n_seq_decode == 0 ? RAD_PHASE_PREFILL : RAD_PHASE_MIXED;
    b.n_out = static_cast<int32_t>(in.out_ids.size());
    b.token_ids = in.tokens.data();
    b.positions = in.positions.data();
    b.cu_seqlens = in.cu_seqlens.data();
    b.seq_ids = in.seq_ids.empty() ? nullptr : in.seq_ids.data();
    b.out_ids = in.out_ids.data();
    b.q_lens = q_lens.data();
    b.ctx_lens = ctx_lens.data();
    b.block_tables = in.block_tables.empty() ? nullptr : in.block_tables.data();
    b.block_table_stride = static_cast<int32_t>(stride);
    b.max_q_len = max_q;
    b.max_ctx_len = max_ctx;
    b.n_hidden = static_cast<int32_t>(in.hidden_ids.size());
    b.hidden_ids = in.hidden_ids.empty() ? nullptr : in.hidden_ids.data();
    // Which out rows get their token on the card, and by which op: `sample` where some row samples
    // (greedy rows ride along with temperature 0), else `argmax`.
    const size_t n_out = in.out_ids.size(), V = static_cast<size_t>(m.vocab);
    std::vector<uint8_t> picked(n_out, 0);
    int pick_op = -1;
    if (m.dev && draws.size() == n_out) {
        bool any = false, sampled = false;
        for (const CardDraw& d : draws) {
            any |= d.on_card;
            sampled |= d.on_card && d.temperature > 0.0f;
        }
        if (any) pick_op = m.sample_op >= 0 && (sampled || m.argmax_op < 0) ? m.sample_op : m.argmax_op;
        for (size_t i = 0; pick_op >= 0 && i < n_out; ++i)
            picked[i] =
                draws[i].on_card && (pick_op == m.sample_op || !(draws[i].temperature > 0.0f)) && (m.pick_mask || !draws[i].allowed);
    }
    // Structured output: masks travel only when a constrained row is picked here.
    bool masked = false;
    for (size_t i = 0; i < n_out && pick_op >= 0; ++i) masked |= picked[i] && draws[i].allowed;
    if (every_row_picked && std::count(picked.begin(), picked.end(), 1) != static_cast<std::ptrdiff_t>(n_out))
        bad("a pipelined step needs every out row's token picked on the card (on_card draws the card's ops can serve)");
    if (!fed_from.empty() && !m.dev) bad("rows fed from the previous step's picks need the plan on a card");
    if (static_cast<int64_t>(fed_from.size()) > n_tok)
        bad(std::to_string(fed_from.size()) + " rows fed from the previous step in a step of " + std::to_string(n_tok) + " tokens");
    for (int32_t src : fed_from)
        if (src < 0 || static_cast<size_t>(src) >= m.picked_last.size() || !m.picked_last[static_cast<size_t>(src)])
            bad("a row fed from the previous step's out row " + std::to_string(src) + ", whose token was not picked on the card (" +
                std::to_string(std::count(m.picked_last.begin(), m.picked_last.end(), 1)) + " of its " +
                std::to_string(m.picked_last.size()) + " out rows were)");
    // The other slot than the step before's (whose picked ids a fed step reads, and which may
    // still be queued); back to that one if this step fails before it is queued.
    struct SlotFlip {
        Impl& m;
        int prev;
        bool queued = false;
        ~SlotFlip() {
            if (!queued) m.use_slot(prev);
        }
    } flip{m, m.slot};
    if (m.dev) m.use_slot(m.slot ^ 1);
    if (pick_op >= 0 && pick_op == m.sample_op) m.stage_draws(draws, picked);
    m.stage_mask_bytes = 0;
    if (masked) m.stage_masks(draws, picked);
    const auto t_stage = Clock::now();
    if (m.dev) m.stage_batch(in, &b);
    m.step_error.clear();
    RadCtx ctx{&kCtxApi, &m};
    if (!m.dev) {
        m.arch->step(&ctx, &b);
        if (!m.step_error.empty()) throw Error("step failed: " + m.step_error);
        if (m.calib) m.calib->end_step(static_cast<int64_t>(in.tokens.size()));
        const float* lg = reinterpret_cast<const float*>(m.buf_base[m.decl.logits]);
        logits.assign(lg, lg + in.out_ids.size() * static_cast<size_t>(m.vocab));
        if (b.n_hidden > 0) m.widen_hidden(m.buf_base[m.decl.pooled], b.n_hidden);
        m.picked_last.clear();
        flip.queued = true;
        return picked;
    }
    const size_t n_picked = static_cast<size_t>(std::count(picked.begin(), picked.end(), 1));
    // The pick op and the copy of its ids to the host run after the model's ops, inside a recorded
    // decode graph with them (every row is picked; the host ignores the ids of rows it samples).
    auto pick = [&]() -> bool {
        const auto rows = static_cast<int64_t>(n_out);
        const RadOperandRef lg = rad_brows(m.decl.logits, rows), ids = rad_raw(m.stage_h + m.st_ids.off, RAD_I32, rows);
        const RadOperandRef mask = masked ? rad_raw2(m.stage_h + m.st_mask.off, RAD_U32, rows, m.mask_words) : rad_none();
        const RadOperandRef with_argmax[3] = {lg, ids, mask};
        const RadOperandRef with_sample[5] = {lg, rad_raw2(m.stage_h + m.st_cfg.off, RAD_F32, rows, 4),
                                              rad_raw(m.stage_h + m.st_u.off, RAD_F64, rows), ids, mask};
        const bool by_sample = pick_op == m.sample_op;
        // failures go to step_error, not an exception: a graph may be recording
        auto failed = [&](const std::string& why) {
            if (m.step_error.empty()) m.step_error = why;
            return false;
        };
        if (m.issue(pick_op, by_sample ? with_sample : with_argmax, (by_sample ? 4 : 2) + (m.pick_mask ? 1 : 0), rows) != RAD_OK)
            return failed("picking the tokens on the card");
        if (m.dev->copy(m.stage_h + m.st_ids.off, m.stage_d + m.st_ids.off, n_out * 4, RAD_COPY_D2H, m.stream) != RAD_OK)
            return failed(std::string("reading the tokens picked on the card: ") + m.dev->last_error());
        return true;
    };
    const auto t_queue = Clock::now();
    m.run_on_device(&ctx, &b, fed_from, n_picked ? pick_op : -1, pick);
    const auto* lg_dev = reinterpret_cast<const float*>(m.buf_base[m.decl.logits]);
    if (n_picked == 0 && n_out) {
        m.device_check(m.dev->copy(m.logits_h, lg_dev, n_out * V * 4, RAD_COPY_D2H, m.stream), "reading the logits");
    } else {
        for (size_t i = 0; i < n_out; ++i)
            if (!picked[i])
                m.device_check(m.dev->copy(m.logits_h + i * V, lg_dev + i * V, V * 4, RAD_COPY_D2H, m.stream), "reading the logits");
    }
    if (b.n_hidden > 0) {  // the pooled rows, widened by Engine::step once the step has run
        const uint64_t bytes = static_cast<uint64_t>(b.n_hidden * m.pooled_width) * elem_bytes(m.decl.buffers[m.decl.pooled].d.dtype);
        m.device_check(m.dev->copy(m.pooled_h, m.buf_base[m.decl.pooled], bytes, RAD_COPY_D2H, m.stream), "reading the pooled rows");
    }
    m.host_times.prepare_us += micros(t_stage - t_enter);
    m.host_times.stage_us += micros(t_queue - t_stage);
    m.host_times.queue_us += micros(Clock::now() - t_queue);
    flip.queued = true;
    m.picked_last = picked;
    return picked;
}

// The tokens the card picked for a finished step, from its slot's ids (-1 for rows whose logits
// came back, where `picked` says which).
static void picked_tokens(const int32_t* ids, const std::vector<uint8_t>* picked, size_t n_out, std::vector<int32_t>& tokens) {
    tokens.assign(ids, ids + n_out);
    for (size_t i = 0; picked && i < n_out; ++i)
        if (!(*picked)[i]) tokens[i] = -1;  // its logits came back instead
}

void Engine::step(const StepBatch& in, std::vector<float>& logits, const std::vector<CardDraw>& draws, std::vector<int32_t>& tokens,
                  std::span<const int32_t> fed_from) {
    Impl& m = *impl_;
    if (!m.queued.empty()) throw Error("bad step: pipelined steps are still queued (collect them first)");
    tokens.clear();
    const std::vector<uint8_t> picked = m.queue_step(in, logits, draws, fed_from, false);
    if (!m.dev) return;
    const auto t_wait = Clock::now();
    m.device_check(m.dev->sync(m.stream), "running the step");
    m.host_times.steps += 1;
    m.host_times.wait_us += micros(Clock::now() - t_wait);
    const size_t n_out = in.out_ids.size(), V = static_cast<size_t>(m.vocab);
    logits.resize(n_out * V);
    for (size_t i = 0; i < n_out; ++i)
        if (!picked[i]) std::memcpy(logits.data() + i * V, m.logits_h + i * V, V * 4);
    if (std::count(picked.begin(), picked.end(), 1))
        picked_tokens(reinterpret_cast<const int32_t*>(m.stage_h + m.st_ids.off), &picked, n_out, tokens);
    if (!in.hidden_ids.empty()) m.widen_hidden(m.pooled_h, static_cast<int64_t>(in.hidden_ids.size()));
}

// A step's pooled rows (the pooled buffer's dtype, on the host) widened to f32 into hidden_last.
void Engine::Impl::widen_hidden(const uint8_t* rows, int64_t n_rows) {
    const int dt = decl.buffers[decl.pooled].d.dtype;
    const int64_t n = n_rows * pooled_width;
    hidden_last.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) hidden_last[static_cast<size_t>(i)] = rad_load_f32(dt, rows, i);
}

void Engine::enqueue(const StepBatch& in, const std::vector<CardDraw>& draws, int32_t fed) {
    if (fed < 0) throw Error("bad step: " + std::to_string(fed) + " rows fed from the previous step");
    std::vector<int32_t> from(static_cast<size_t>(fed));
    for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<int32_t>(i);
    enqueue(in, draws, from);
}

void Engine::enqueue(const StepBatch& in, const std::vector<CardDraw>& draws, std::span<const int32_t> fed_from) {
    Impl& m = *impl_;
    if (!m.dev) throw Error("bad step: pipelined steps need the plan on a card");
    if (m.queued.size() >= 2) throw Error("bad step: two steps are queued already (collect one first)");
    std::vector<float> none;
    m.queue_step(in, none, draws, fed_from, true);
    void* mark = m.marks[m.slot];
    if (mark) m.device_check(m.dev->mark_record(mark, m.stream), "marking the end of a queued step");
    m.queued.push_back({m.slot, in.out_ids.size(), mark});
}

size_t Engine::queued_steps() const { return impl_->queued.size(); }

void Engine::collect(std::vector<int32_t>& tokens) {
    Impl& m = *impl_;
    if (m.queued.empty()) throw Error("no queued step to collect");
    const Impl::Queued q = m.queued.front();
    m.queued.pop_front();
    const auto t_wait = Clock::now();
    try {
        m.device_check(q.mark ? m.dev->mark_wait(q.mark) : m.dev->sync(m.stream), "running a queued step");
    } catch (...) {
        m.queued.clear();  // what was queued after it cannot have run either
        m.picked_last.clear();
        throw;
    }
    m.host_times.steps += 1;
    m.host_times.wait_us += micros(Clock::now() - t_wait);
    picked_tokens(reinterpret_cast<const int32_t*>(m.stage_host + static_cast<uint64_t>(q.slot) * m.stage_bytes + m.st_ids.off), nullptr,
                  q.n_out, tokens);
}

}  // namespace radiance::engine
