// rope_freqs.cpp: rope frequencies from the shared header libref uses too (radiance/kernels/
// rad_rope_freqs.h) (built with -ffp-contract=off like libref: an angle is pos * inv_freq, and at a
// position of 10^5 one ulp of inv_freq moves cos/sin by 10^-3, far outside the check's 1e-5).
#include "rope_freqs.h"

#include <radiance/kernels/rad_rope_freqs.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cpu {

bool rope_freqs(const RadArgs* a, int64_t rot, RopeFreqs* f) {
    RadRopeFreqs shared;
    if (!rad_rope_freqs(a, rot, &shared)) return false;
    f->inv = std::move(shared.inv);
    f->attn = shared.attn;
    f->inv_long = std::move(shared.inv_long);
    f->long_from = shared.long_from;
    return true;
}

void rope_tables(const RopeFreqs& f, const int32_t* pos, const RopeSeqs& seqs, int64_t i0, int64_t i1, bool gptj, float* cs,
                 int64_t stride) {
    const int64_t half = static_cast<int64_t>(f.inv.size()), rot = 2 * half;
    for (int64_t i = i0; i < i1; ++i) {
        float* t = cs + i * stride;
        const float* inv = rad_rope_row_is_long(f.long_from, pos, seqs.cu, seqs.n_seq, i) ? f.inv_long.data() : f.inv.data();
        for (int64_t j = 0; j < half; ++j) {
            const float ang = static_cast<float>(pos[i]) * inv[j];
            const float c = static_cast<float>(std::cos(static_cast<double>(ang))) * f.attn;
            const float s = static_cast<float>(std::sin(static_cast<double>(ang))) * f.attn;
            if (gptj) {
                t[2 * j] = t[2 * j + 1] = c;
                t[rot + 2 * j] = -s;
                t[rot + 2 * j + 1] = s;
            } else {
                t[j] = c;
                t[half + j] = s;
            }
        }
    }
}

}  // namespace cpu
