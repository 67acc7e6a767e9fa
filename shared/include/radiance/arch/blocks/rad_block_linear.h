// rad_block_linear.h: a projection's weight at the encoding the container stores it in.
//
// Plain: one plane, the conventional `gemm` (and the fusions that read a plain weight). Quantised
// by the affine scheme (rad_decode.h: codes, a scale per group, an optional zero point, an optional
// minimum grouped as the scale, as a GGUF K-quant import writes; under the perm transform, GPTQ
// act-order's column order, its table): `gemm_q`,
// whose operands are the planes themselves, declared as views of the stored weight (`planes`), so
// a kernel library reads them in place and nothing is dequantised on the way. Which code dtypes
// a plugin serves is its build's (its quant descriptor's): a weight in any other encoding fails the
// declaration naming the weight, its encoding and the plugin, never dequantised silently.
#pragma once
#include <string>

#include "rad_block_util.h"

namespace radblk {

struct Linear {
    rad_weight w = RAD_NULL_HANDLE;  // the codes (or the plain weight): operand `w`
    rad_weight scale = RAD_NULL_HANDLE, zero = RAD_NULL_HANDLE, min_plane = RAD_NULL_HANDLE, perm = RAD_NULL_HANDLE;
    bool quantised = false;
    std::string qtype, sdtype;         // the codes' and scales' dtypes, as gemm_q's parameters name them
    int64_t block_r = 1, block_c = 0;  // what one scale covers (0: the whole extent)
    int64_t rows = 0, cols = 0;        // the full logical shape

    // Declares weight `name` by `d` and, when it is stored quantised, views of its scale, zero and
    // min planes (`name`.scale, `name`.zero, `name`.min, sharded as the weight is) and of its perm
    // table (`name`.perm, whole on every rank). `served` lists the code dtypes this plugin reads
    // quantised ("" for an unquantised plugin); `world` is the tensor-parallel ranks. False (and the
    // declaration failed, naming why) for an encoding the plugin does not serve.
    bool declare(RadBuilder* b, const std::string& name, RadWeightDecl d, const char* served, int world) {
        rows = d.shape[0];
        cols = d.rank > 1 ? d.shape[1] : 1;
        d.planes = "codes";  // the whole weight when plain: its one plane is its codes
        w = rad_decl_weight(b, name.c_str(), &d);
        RadEncoding e;
        if (rad_weight_encoding(b, w, &e) != RAD_OK || (std::string(e.scheme) == "plain" && e.transform[0] == 0)) return true;
        const std::string what = "weight '" + name + "' is stored in encoding '" + e.scheme + "' (" + describe(e) + ")";
        int pm = -1;
        const int prc = rad_perm_plane(&e, cols, &pm);
        if (std::string(e.scheme) != "affine" || prc == RAD_E_UNSUPPORTED) return refuse(b, what + ", which this plugin does not read");
        if (prc != RAD_OK) return refuse(b, what + ": the perm transform needs a table 't.perm' of i32 [1 x " + std::to_string(cols) + "]");
        // A split by columns gives each rank a slice of x in the weight's column order, while the
        // table orders the whole stored row: no slice of the codes pairs with that slice of x.
        if (pm >= 0 && d.shard == RAD_SHARD_COL && world > 1)
            return refuse(b, what + ": its columns are stored permuted (GPTQ act-order), which a split by columns over " +
                                 std::to_string(world) + " tensor-parallel ranks cannot serve (serve it on one rank)");
        qtype = rad_dtype_name(e.planes[0].dtype);
        if (!word_in(qtype, served))
            return refuse(b, what + ": this plugin reads " +
                                 (*served ? std::string("codes ") + served : std::string("plain weights only")) +
                                 " (convert with the recipe its quant descriptor names, or serve the container with the plugin of its)");
        const int s = rad_encoding_plane(&e, "scale"), z = rad_encoding_plane(&e, "zero"), mn = rad_encoding_plane(&e, "min");
        if (s < 0 || e.n_planes != 2 + (z >= 0) + (mn >= 0) + (pm >= 0))
            return refuse(b, what + ": gemm_q takes codes, one scale level, a zero point, one min level and a perm table");
        for (const int k : {z, mn})
            if (k >= 0 && (e.planes[k].block_r != e.planes[s].block_r || e.planes[k].block_c != e.planes[s].block_c))
                return refuse(b, what + ": its " + e.planes[k].role + " and scale planes are grouped differently");
        if (mn >= 0 && e.planes[mn].dtype != e.planes[s].dtype) return refuse(b, what + ": gemm_q reads a min of the scale's dtype");
        sdtype = rad_dtype_name(e.planes[s].dtype);
        block_r = e.planes[s].block_r;
        block_c = e.planes[s].block_c;
        quantised = true;
        RadWeightDecl v = d;
        v.source = name.c_str();
        const std::string sn = name + ".scale", zn = name + ".zero";
        v.planes = "scale";
        scale = rad_decl_weight(b, sn.c_str(), &v);
        if (z >= 0) {
            v.planes = "zero";
            zero = rad_decl_weight(b, zn.c_str(), &v);
        }
        if (mn >= 0) {
            const std::string mname = name + ".min";
            v.planes = "min";
            min_plane = rad_decl_weight(b, mname.c_str(), &v);
        }
        if (pm >= 0) {  // a table: every rank's slice carries it whole
            const std::string pname = name + ".perm";
            v.planes = "t.perm";
            perm = rad_decl_weight(b, pname.c_str(), &v);
        }
        return true;
    }

    // The op computing y = x . w^T (+ bias) over up to max_tok rows, N and K this rank's: gemm, or
    // gemm_q with the planes' grouping (group_rows / group: rows / columns one scale covers here).
    rad_op declare_op(RadBuilder* b, int64_t max_tok, int64_t N, int64_t K) const {
        if (!quantised)
            return op(b, "gemm", {RAD_RANGE("M", 1, max_tok), RAD_INT("N", N), RAD_INT("K", K), RAD_STR("wdtype", wdtype(b, w))}, {w});
        const RadParamDecl p[] = {RAD_RANGE("M", 1, max_tok),
                                  RAD_INT("N", N),
                                  RAD_INT("K", K),
                                  RAD_STR("qtype", qtype.c_str()),
                                  RAD_INT("group", block_c ? block_c : K),
                                  RAD_INT("group_rows", block_r ? block_r : N),
                                  RAD_STR("sdtype", sdtype.c_str())};
        rad_weight ws[5] = {w, scale};
        int nw = 2;
        for (rad_weight x : {zero, min_plane, perm})
            if (x != RAD_NULL_HANDLE) ws[nw++] = x;
        return rad_decl_op(b, "gemm_q", p, 7, ws, nw);
    }

    // Issues an op from declare_op over n rows.
    void issue(RadCtx* ctx, rad_op h, int64_t n, RadOperandRef x, RadOperandRef bias, RadOperandRef y) const {
        if (!quantised) {
            RAD_ISSUE_N(ctx, h, n, x, rad_w(w), bias, y);
            return;
        }
        const RadOperandRef z = zero != RAD_NULL_HANDLE ? rad_w(zero) : rad_none();
        const RadOperandRef mn = min_plane != RAD_NULL_HANDLE ? rad_w(min_plane) : rad_none();
        if (perm != RAD_NULL_HANDLE)  // operands 6 and 7, after y (rad_ops.h)
            RAD_ISSUE_N(ctx, h, n, x, rad_w(w), rad_w(scale), z, bias, y, mn, rad_w(perm));
        else if (min_plane != RAD_NULL_HANDLE)
            RAD_ISSUE_N(ctx, h, n, x, rad_w(w), rad_w(scale), z, bias, y, mn);
        else
            RAD_ISSUE_N(ctx, h, n, x, rad_w(w), rad_w(scale), z, bias, y);
    }

private:
    static bool refuse(RadBuilder* b, const std::string& why) {
        rad_decl_fail(b, why.c_str());
        return false;
    }
    static std::string describe(const RadEncoding& e) {
        std::string out;
        for (int k = 0; k < e.n_planes; ++k) out += std::string(k ? ", " : "") + e.planes[k].role + " " + rad_dtype_name(e.planes[k].dtype);
        return out + (e.transform[0] ? std::string(", transform ") + e.transform : std::string());
    }
    static bool word_in(const std::string& w, const char* set) {
        const std::string s = std::string(" ") + set + " ";
        return !w.empty() && s.find(" " + w + " ") != std::string::npos;
    }
};

// A layer's closing projection of `in` into `out`: a plain gemm, or with add (the model's decode
// fusions, plain weights only) gemm_add, which adds into `out`, the residual stream, and must
// resolve (the model checked that a library serves it; a layer whose weights differ fails naming
// `what`); gemm_q for a quantised weight.
inline rad_op out_projection(RadBuilder* b, bool add, int64_t max_tok, int64_t N, int64_t K, const Linear& lin, rad_buf in, rad_buf out,
                             const std::string& what) {
    if (lin.quantised || !add) {
        if (add) rad_decl_fail(b, ("the residual add folds into no quantised projection (" + what + ")").c_str());
        rad_op h = lin.declare_op(b, max_tok, N, K);
        uses(b, h, {in}, {out});
        return h;
    }
    rad_op h =
        op(b, "gemm_add", {RAD_RANGE("M", 1, max_tok), RAD_INT("N", N), RAD_INT("K", K), RAD_STR("wdtype", wdtype(b, lin.w))}, {lin.w});
    if (!rad_op_resolved(b, h)) rad_decl_fail(b, ("gemm_add does not resolve for " + what).c_str());
    uses(b, h, {in, out}, {out});
    return h;
}

}  // namespace radblk
