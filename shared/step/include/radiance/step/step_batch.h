// step_batch.h: one step's batch, as the front end's scheduler builds it, the step codec carries
// it and the engine runs it. Plain values; the engine checks a batch before it runs it.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace radiance::step {

// Sequences are ordered decode-first; cu_seqlens has n_seq + 1 entries; block_tables is
// [n_seq][block_table_stride] block ids; out_ids are rows whose logits are wanted; hidden_ids
// are rows whose final normed hidden state is wanted instead (embeddings: rad_declare_pooled),
// returned in that order beside the logits, never sampled.
struct StepBatch {
    std::vector<int32_t> tokens, positions, cu_seqlens, seq_ids, out_ids, block_tables, hidden_ids;
    int32_t block_table_stride = 0;
    int32_t n_seq_decode = 0;
};

// A batch of one sequence, tokens at positions 0.. of sequence 0, which owns blocks 0.. of a
// cache of `block` tokens a block (the tools that score or calibrate on a text, one chunk at a
// time); the caller names the rows it wants in out_ids.
inline StepBatch one_sequence(std::vector<int32_t> tokens, int32_t block) {
    StepBatch b;
    b.tokens = std::move(tokens);
    const auto n = static_cast<int32_t>(b.tokens.size());
    for (int32_t i = 0; i < n; ++i) b.positions.push_back(i);
    b.cu_seqlens = {0, n};
    b.seq_ids = {0};
    b.block_table_stride = (n + block - 1) / block;
    for (int32_t k = 0; k < b.block_table_stride; ++k) b.block_tables.push_back(k);
    return b;
}

}  // namespace radiance::step
