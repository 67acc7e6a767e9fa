// launch_rope.cpp: the rope row. Frequencies once per launch, cos/sin per row (rope_freqs.cpp,
// libref's arithmetic), then the vectorised rotation; both in one parallel region over rows.
#include <cstring>
#include <vector>

#include "launch_util.h"
#include "rope_freqs.h"

namespace {

using namespace cpu;

struct RopeJob {
    RopeArgs args;
    const RopeFreqs* freqs;
    const int32_t* pos;
    RopeSeqs seqs;
};

void rope_rows(const RopeJob& j, int64_t i0, int64_t i1) {
    rope_tables(*j.freqs, j.pos, j.seqs, i0, i1, j.args.gptj, const_cast<float*>(j.args.cs), j.args.cs_stride);
    kernels().rope(j.args, i0, i1);
}

}  // namespace

int cpu_rope(const RadArgs* a) {
    RadTensor* x = rad_arg_out(a, 0);
    const RadTensor* pos = rad_arg_in(a, 1);
    if (!is_f32(x) || !is_i32(pos)) return RAD_E_DTYPE;
    const int64_t n = rad_args_geti(a, "n"), heads = rad_args_geti(a, "n_head"), hd = rad_args_geti(a, "head_dim");
    const int64_t rot = rad_args_geti_or(a, "rot_dim", hd);
    if (rot <= 0 || rot > hd || rot % 2) return RAD_E_SHAPE;
    static thread_local RopeFreqs freqs;
    if (!rope_freqs(a, rot, &freqs)) return RAD_E_ARG;
    const bool gptj = !std::strcmp(rad_args_gets_or(a, "layout", "neox"), "gptj");
    const int64_t stride = gptj ? 2 * rot : rot;
    static thread_local std::vector<float> tables;
    tables.resize(static_cast<size_t>(std::max<int64_t>(n, 0) * stride));
    const RadTensor* cu = rad_arg_in(a, 2);  // optional: each row's sequence (longrope)
    if (cu && !is_i32(cu)) return RAD_E_DTYPE;
    const RopeSeqs seqs{cu ? static_cast<const int32_t*>(cu->data) : nullptr, cu ? rad_tensor_elems(cu) - 1 : 0};
    RopeJob job{{rows_out(x), heads, hd, rot, gptj, tables.data(), stride}, &freqs, static_cast<const int32_t*>(pos->data), seqs};
    // Per row: rot cos/sin in double (about 40 operations each) and 3 per rotated value.
    for_rows(n, 40.0 * static_cast<double>(rot) + 3.0 * static_cast<double>(heads * rot), rope_rows, job);
    return RAD_OK;
}
