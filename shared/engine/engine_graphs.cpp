// engine_graphs.cpp: running a step on the card, and recording and replaying decode graphs.
// One job: the step's inputs are staged into their fixed regions of the current slot (block
// tables at the width the step needs), copied to the card, fed from the previous step's picked
// tokens where pipelined, and the architecture's launches issued; a decode step of a shape seen
// before is recorded as a graph on its second run and replayed after. Kept together because the
// staging layout is what makes a replayed graph find its inputs where it recorded them.
#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <string>

#include "engine_impl.h"
#include "radiance/util/error.h"

namespace radiance::engine {

// The sample op's per-row settings and draws into their staging regions (copied with the step's
// inputs); rows not picked on the card take the cheap greedy path.
void Engine::Impl::stage_draws(const std::vector<CardDraw>& draws, const std::vector<uint8_t>& picked) {
    auto* cfg = reinterpret_cast<float*>(stage_h + st_cfg.off);
    auto* u = reinterpret_cast<double*>(stage_h + st_u.off);
    for (size_t i = 0; i < draws.size(); ++i) {
        const CardDraw& d = draws[i];
        const bool on = picked[i] != 0;
        cfg[4 * i + 0] = on ? d.temperature : 0.0f;
        cfg[4 * i + 1] = d.top_p;
        cfg[4 * i + 2] = d.min_p;
        cfg[4 * i + 3] = static_cast<float>(d.top_k);
        u[i] = d.u;
    }
}

// Structured output's masks into their region: a constrained row's own, all ones for the rest
// (every token allowed); run_on_device copies them after the inputs.
void Engine::Impl::stage_masks(const std::vector<CardDraw>& draws, const std::vector<uint8_t>& picked) {
    const size_t row = static_cast<size_t>(mask_words) * 4;
    for (size_t i = 0; i < draws.size(); ++i) {
        uint8_t* dst = stage_h + st_mask.off + i * row;
        if (picked[i] && draws[i].allowed)
            std::memcpy(dst, draws[i].allowed, row);
        else
            std::memset(dst, 0xFF, row);
    }
    stage_mask_bytes = draws.size() * row;
}

// The step's inputs into their fixed regions (block tables padded to the card's stride) and the
// batch pointed at them; run_on_device copies them to the card in one copy.
void Engine::Impl::stage_batch(const StepBatch& in, RadBatch* b) {
    const int64_t n_seq = b->n_seq;
    auto put = [&](const StageRegion& r, const int32_t* src, size_t n) -> const int32_t* {
        auto* dst = reinterpret_cast<int32_t*>(stage_h + r.off);
        if (n) std::memcpy(dst, src, n * 4);
        return dst;
    };
    b->cu_seqlens = put(st_cu, b->cu_seqlens, static_cast<size_t>(n_seq + 1));
    if (b->seq_ids) b->seq_ids = put(st_seq, b->seq_ids, static_cast<size_t>(n_seq));
    b->q_lens = put(st_q, b->q_lens, static_cast<size_t>(n_seq));
    b->ctx_lens = put(st_ctx, b->ctx_lens, static_cast<size_t>(n_seq));
    b->out_ids = put(st_out, b->out_ids, in.out_ids.size());
    if (b->hidden_ids) b->hidden_ids = put(st_hid, b->hidden_ids, in.hidden_ids.size());
    b->token_ids = put(st_tokens, b->token_ids, in.tokens.size());
    b->positions = put(st_pos, b->positions, in.positions.size());
    uint64_t end = st_bt.off;
    if (b->block_tables) {
        auto* dst = reinterpret_cast<int32_t*>(stage_h + st_bt.off);
        const int64_t width = table_width(b->max_ctx_len);
        const int64_t used = std::min<int64_t>(in.block_table_stride, width);
        for (int64_t q = 0; q < n_seq; ++q) {  // each row's entries, then zeros to the card's stride
            std::memcpy(dst + q * width, in.block_tables.data() + q * in.block_table_stride, static_cast<size_t>(used) * 4);
            std::memset(dst + q * width + used, 0, static_cast<size_t>(width - used) * 4);
        }
        b->block_tables = dst;
        b->block_table_stride = static_cast<int32_t>(width);
        end += static_cast<uint64_t>(n_seq * width) * 4;
    }
    stage_used = end;  // copied by run_on_device, inside a recorded decode graph
}

// The block tables' width on the card for a step whose longest context is max_ctx: the blocks it
// needs rounded up to a power of two, from 256 positions, at most the plan's. A kernel library
// may size its work by the width (libgpu's decode attention cuts a context into splits by it, and
// with one split it launches no merge), so short contexts do not pay for the plan's longest one;
// recorded decode graphs are keyed by it. (Against the plan's width in every step, docs/
// PERFORMANCE.md session 15: batch-1 decode in a plan for 4,096-token prompts as fast as in a
// small plan; that A/B switch is retired.)
int64_t Engine::Impl::table_width(int64_t max_ctx) const {
    if (block <= 0) return stage_stride;
    const int64_t need = (max_ctx + block - 1) / block;
    int64_t w = (256 + block - 1) / block;
    while (w < need) w *= 2;
    return std::min(w, stage_stride);
}

// Decode steps of one shape are recorded as a graph on their second run and replayed after:
// their launches differ only in the inputs, which sit at the same place every step.
void Engine::Impl::run_on_device(RadCtx* ctx, const RadBatch* b, std::span<const int32_t> fed_from, int pick_op,
                                 const std::function<bool()>& pick) {
    // (a step with embedding rows is never recorded: the graph's key does not hold them)
    const bool graphable = opts.graphs && b->phase == RAD_PHASE_DECODE && b->n_hidden == 0 && (opts.world_size == 1 || collectives_on_queue);
    if (opts.comm && opts.comm->staging != graph_generation) {  // a new generation of the group: the
        for (auto& [k, g] : graphs)                             // recorded collectives name the old one
            if (g) dev->graph_destroy(g);
        graphs.clear();
        graph_generation = opts.comm->staging;
    }
    // An architecture may skip gathering the output rows when they are every row in order (a
    // decode step's usual case), so that is part of a recorded step's shape too, as is the block
    // tables' width (table_width).
    bool every_row = b->n_out == b->n_tok;
    for (int32_t i = 0; every_row && i < b->n_out; ++i) every_row = b->out_ids[i] == i;
    // The pick op runs inside the recorded graph, after the model's ops. The inputs' copy is the
    // recorded graph's first node (its size follows the key's sequences and table width): one
    // launch a step instead of a copy and a launch. (The pick issued after the graph and the copy
    // queued before it measured level, docs/PERFORMANCE.md, session 15; their A/B switches are
    // retired.)
    auto copy_inputs = [&] {
        int rc = dev->copy(stage_d, stage_h, stage_used, RAD_COPY_H2D, stream);
        if (rc == RAD_OK && stage_mask_bytes)
            rc = dev->copy(stage_d + st_mask.off, stage_h + st_mask.off, stage_mask_bytes, RAD_COPY_H2D, stream);
        return rc;
    };
    // A fed step's rows take the previous step's picked tokens from its slot on the card, after
    // the inputs' copy (which brought placeholders there): a copy per run of rows fed from
    // consecutive out rows (one run while no row of the previous step dropped out).
    auto feed = [&] {
        const uint8_t* prev_ids = stage_dev.data + static_cast<uint64_t>(slot ^ 1) * stage_bytes + st_ids.off;
        for (size_t i = 0; i < fed_from.size();) {
            size_t j = i + 1;
            while (j < fed_from.size() && fed_from[j] == fed_from[j - 1] + 1) ++j;
            if (dev->copy(stage_d + st_tokens.off + i * 4, prev_ids + static_cast<uint64_t>(fed_from[i]) * 4, (j - i) * 4, RAD_COPY_D2D,
                          stream) != RAD_OK)
                return std::string("feeding the previous step's tokens: ") + dev->last_error();
            i = j;
        }
        return std::string();
    };
    // Which rows are fed from where changes from step to step (a row that finished drops out), so
    // a fed step's copies stay outside its graph: the inputs' copy (masks included) and the
    // feeding are queued first and the graph holds the model's ops and the pick. Steps without fed
    // rows keep the inputs' copy inside.
    const bool fed = !fed_from.empty();
    const std::array<int64_t, 9> key{b->n_tok, b->n_seq, b->n_out,    every_row ? 1 : 0,       b->block_table_stride,
                                     pick_op,  slot,     fed ? 1 : 0, stage_mask_bytes ? 1 : 0};
    auto it = graphable ? graphs.find(key) : graphs.end();
    const bool replay = it != graphs.end() && it->second;
    const bool record = it != graphs.end() && !it->second;  // seen once: record this run
    const bool copy_in_graph = (replay || record) && !fed;
    if (!copy_in_graph) {
        device_check(copy_inputs(), "copying the step's inputs");
        if (const std::string e = feed(); !e.empty()) throw Error("step failed: " + e);
    }
    if (replay) {
        device_check(dev->graph_launch(it->second, stream), "replaying a decode graph");
        return;
    }
    if (record) device_check(dev->graph_begin(stream), "starting a graph");
    if (record && copy_in_graph && copy_inputs() != RAD_OK && step_error.empty())
        step_error = std::string("copying the step's inputs: ") + dev->last_error();
    if (step_error.empty()) arch->step(ctx, b);
    if (step_error.empty() && pick_op >= 0) pick();  // a failed pick leaves step_error
    if (record) {
        void* g = nullptr;
        int rc = dev->graph_end(stream, &g);
        if (!step_error.empty()) {
            if (g) dev->graph_destroy(g);
            throw Error("step failed: " + step_error);
        }
        device_check(rc, "recording a decode graph");
        it->second = g;
        device_check(dev->graph_launch(g, stream), "replaying a decode graph");
        return;
    }
    if (!step_error.empty()) throw Error("step failed: " + step_error);
    if (graphable) graphs.emplace(key, nullptr);
}

}  // namespace radiance::engine
