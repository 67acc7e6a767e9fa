// step_batch.h: one step's batch, as the front end's scheduler builds it, the step codec carries
// it and the engine runs it. Plain values; the engine checks a batch before it runs it.
#pragma once
#include <cstdint>
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

}  // namespace radiance::step
