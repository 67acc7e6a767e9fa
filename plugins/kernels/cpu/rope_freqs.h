// rope_freqs.h: rotary frequencies and per-position cos/sin, computed exactly as libref does.
#pragma once
#include <radiance/rad_plugin.h>

#include <cstdint>
#include <vector>

namespace cpu {

struct RopeFreqs {
    std::vector<float> inv;  // rot/2 inverse frequencies
    float attn = 1.0f;       // cos/sin multiplier (yarn's and longrope's attention factor)
    std::vector<float> inv_long;  // longrope: rows whose sequence reaches long_from turn by these
    int64_t long_from = -1;
};

// Each row's sequence for longrope's choice (rad_rope_row_is_long): cu_seqlens, or null.
struct RopeSeqs {
    const int32_t* cu = nullptr;
    int64_t n_seq = 0;
};

// transformers' initialisers (none/default, linear, llama3, yarn, longrope); false for an unknown scaling.
bool rope_freqs(const RadArgs* a, int64_t rot, RopeFreqs* f);

// cos/sin tables of rows [i0, i1) at cs + i * stride, in RopeArgs' layout (neox or gptj).
void rope_tables(const RopeFreqs& f, const int32_t* pos, const RopeSeqs& seqs, int64_t i0, int64_t i1, bool gptj, float* cs,
                 int64_t stride);

}  // namespace cpu
