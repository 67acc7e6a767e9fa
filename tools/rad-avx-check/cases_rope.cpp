// rope cases: every scaling (none, linear, llama3, yarn, with and without yarn's attn_factor, longrope),
// both layouts, partial rotary dims, head sizes that leave vector tails (rot/2 = 40, 3), and
// positions up to 131072, where any difference in the frequencies would show.
#include <string>

#include "cases.h"

namespace avxcheck {
namespace {

void rope(Gen& g, std::vector<Case>& out, int64_t n, int64_t heads, int64_t hd, int64_t rot, const std::string& layout,
          const std::string& scaling, Params extra = {}, int64_t max_pos = 131072, int64_t pad = 0) {
    Case c;
    c.op = "rope";
    c.label = "rope n=" + std::to_string(n) + " heads=" + std::to_string(heads) + " hd=" + std::to_string(hd) +
              " rot=" + std::to_string(rot) + " " + layout + " " + scaling + (pad ? " pitch+" + std::to_string(pad) : "");
    c.params = {{"n", pint(n)},           {"n_head", pint(heads)},  {"head_dim", pint(hd)},    {"rot_dim", pint(rot)},
                {"theta", pf64(10000.0)}, {"layout", pstr(layout)}, {"scaling", pstr(scaling)}};
    for (auto& [k, v] : extra) c.params[k] = v;
    std::vector<int32_t> pos;
    for (int64_t i = 0; i < n; ++i) pos.push_back(static_cast<int32_t>(i == 0 ? 0 : g.below(max_pos)));
    c.opds.push_back(as_output(g.rows(n, heads * hd, pad, -2, 2)));
    c.opds.push_back(i32(pos));
    c.tol = kRowwise;
    out.push_back(std::move(c));
}

}  // namespace

void rope_cases(Gen& g, std::vector<Case>& out) {
    const Params llama3 = {{"factor", pf64(8.0)},
                           {"low_freq_factor", pf64(1.0)},
                           {"high_freq_factor", pf64(4.0)},
                           {"orig_ctx", pint(8192)},
                           {"theta", pf64(500000.0)}};
    const Params yarn = {{"factor", pf64(4.0)}, {"orig_ctx", pint(4096)}};
    const Params yarn_af = {{"factor", pf64(40.0)},
                            {"orig_ctx", pint(4096)},
                            {"beta_fast", pf64(32.0)},
                            {"beta_slow", pf64(1.0)},
                            {"attn_factor", pf64(0.707)}};
    for (int64_t n : {1, 3, 17, 64}) {
        rope(g, out, n, 14, 64, 64, "neox", "none", {{"theta", pf64(1000000.0)}});
        rope(g, out, n, 32, 128, 128, "neox", "llama3", llama3);
    }
    rope(g, out, 17, 8, 128, 128, "neox", "linear", {{"factor", pf64(4.0)}});
    rope(g, out, 17, 8, 128, 128, "neox", "yarn", yarn);
    rope(g, out, 3, 8, 64, 64, "neox", "yarn", yarn_af);
    rope(g, out, 17, 8, 128, 64, "neox", "none");                // partial rotary dim
    rope(g, out, 17, 4, 80, 80, "neox", "none", {}, 131072, 9);  // rot/2 = 40, pitched
    rope(g, out, 3, 2, 6, 6, "neox", "none");                    // rot/2 = 3
    for (int64_t n : {1, 17}) rope(g, out, n, 16, 64, 64, "gptj", "none");
    rope(g, out, 17, 8, 128, 64, "gptj", "llama3", llama3);
    rope(g, out, 3, 4, 80, 40, "gptj", "yarn", yarn);  // rot 40: a partial vector
    rope(g, out, 3, 2, 6, 6, "gptj", "linear", {{"factor", pf64(2.0)}});
    // longrope (Phi-3): 12 rows in sequences of 1, 4 and 7 rows at positions around orig_ctx, so
    // one sequence is short, one long throughout and one long only because its last row is;
    // then the same rows without cu_seqlens (each row's own position decides)
    for (int64_t rot : {96, 12}) {
        std::string sf, lf;
        for (int64_t j = 0; j < rot / 2; ++j) {
            sf += (j ? "," : "") + std::to_string(1.0 + 0.01 * static_cast<double>(j * j));
            lf += (j ? "," : "") + std::to_string(1.0 + 1.7 * static_cast<double>(j));
        }
        const Params lr = {{"orig_ctx", pint(4096)}, {"factor", pf64(32.0)}, {"attn_factor", pf64(1.1902380714238083)},
                           {"short_factor", pstr(sf)}, {"long_factor", pstr(lf)}};
        const std::vector<int32_t> pos = {4000, 4090, 4091, 4092, 4096, 4100, 4101, 4102, 4103, 4104, 4105, 4106};
        for (bool seqs : {true, false}) {
            rope(g, out, 12, 4, rot == 96 ? 96 : 16, rot, "neox", "longrope", lr);
            out.back().label += seqs ? " 3 seqs" : " no seqs";
            out.back().opds[1] = i32(pos);
            if (seqs) out.back().opds.push_back(i32({0, 1, 5, 12}));
        }
    }
}

}  // namespace avxcheck
