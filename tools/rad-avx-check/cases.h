// cases.h: the case lists of rad-avx-check, one file per family of ops.
#pragma once
#include <vector>

#include "check_case.h"

namespace avxcheck {

// Tolerances (relative L2 error against libref), never loosened to make a case pass:
//
// kExact: data movement and single IEEE operations (embed's widen-and-scale, add, gather_rows)
//   round once, the same way in every library: the results must be bit-identical.
// kRowwise = 1e-5: norms, activations and rope. Per element a few ulps (2^-24 = 6e-8) from a
//   different summation order of the norm statistics (FMA, vector lanes: typically sqrt(dim)
//   ulps, ~4e-6 on 4096) or from libcpu's vector exp (about 1 ulp) and the rearranged
//   activation forms; rope's cos/sin tables are libref's own bits, only the rotation rounds
//   differently.
// kDot = 1e-4: gemm and attention reduce long dot products (K up to 4864 here, and softmax-weighted
//   sums over up to 1000 positions) in another order with FMA; the difference grows like
//   sqrt(K) ulps (~4e-6 at K = 4864, ~5e-6 for the bf16 hi/lo split of level 3), so 1e-4 keeps
//   a 20x margin while any indexing or blocking bug (a wrong tile, a dropped tail, a missed
//   bias) shows as an error near 1.
constexpr double kExact = 0.0;
constexpr double kRowwise = 1e-5;
constexpr double kDot = 1e-4;

void gemm_cases(Gen& g, std::vector<Case>& out);
void attention_cases(Gen& g, std::vector<Case>& out);
void rope_cases(Gen& g, std::vector<Case>& out);
void rowwise_cases(Gen& g, std::vector<Case>& out);  // norms, activations, add, embed, gather_rows

}  // namespace avxcheck
