// Row-wise op cases: rms_norm (whole rows and per-head groups, Gemma's unit offset, in place),
// layer_norm (with and without bias, in place), swiglu / geglu / gelu (inputs reaching the
// saturated ends of exp), add (in place on either input), embed (every table dtype, scale, an
// out-of-range id) and gather_rows. Widths are model widths plus odd ones with vector tails.
#include <string>

#include "cases.h"

namespace avxcheck {
namespace {

const int64_t kRows[] = {1, 3, 17, 64};

Case base(const std::string& op, int64_t n, int64_t dim, const std::string& extra) {
    Case c;
    c.op = op;
    c.label = op + " n=" + std::to_string(n) + " dim=" + std::to_string(dim) + extra;
    c.params = {{"n", pint(n)}, {"dim", pint(dim)}};
    c.tol = kRowwise;
    return c;
}

void rms_norm(Gen& g, std::vector<Case>& out, int64_t n, int64_t dim, int64_t groups, int wdt, bool unit, bool in_place) {
    Case c = base("rms_norm", n, dim,
                  std::string(" groups=") + std::to_string(groups) + " w=" + rad_dtype_name(wdt) + (unit ? " unit_offset" : "") +
                      (in_place ? " in-place" : ""));
    c.params["groups"] = pint(groups);
    c.params["eps"] = pf64(1e-6);
    c.params["wdtype"] = pstr(rad_dtype_name(wdt));
    if (unit) c.params["unit_offset"] = pint(1);
    Operand x = g.rows(n, dim * groups, in_place ? 0 : 3, -3, 3);
    if (in_place) x.output = true;
    c.opds.push_back(x);
    c.opds.push_back(g.vector(wdt, dim, -2, 2));
    c.opds.push_back(in_place ? alias_of(0, x) : as_output(g.rows(n, dim * groups, 5)));
    out.push_back(std::move(c));
}

void layer_norm(Gen& g, std::vector<Case>& out, int64_t n, int64_t dim, int wdt, bool bias, bool in_place) {
    Case c = base("layer_norm", n, dim, std::string(" w=") + rad_dtype_name(wdt) + (bias ? " +bias" : "") + (in_place ? " in-place" : ""));
    c.params["eps"] = pf64(1e-5);
    c.params["wdtype"] = pstr(rad_dtype_name(wdt));
    Operand x = g.rows(n, dim, 0, 0.5f, 3.5f);  // a mean away from zero
    if (in_place) x.output = true;
    c.opds.push_back(x);
    c.opds.push_back(g.vector(wdt, dim, -2, 2));
    c.opds.push_back(bias ? g.vector(wdt, dim) : absent());
    c.opds.push_back(in_place ? alias_of(0, x) : as_output(g.rows(n, dim)));
    out.push_back(std::move(c));
}

void glu(Gen& g, std::vector<Case>& out, const std::string& op, int64_t n, int64_t dim, float range) {
    Case c = base(op, n, dim, " range=" + std::to_string(static_cast<int>(range)));
    c.opds.push_back(g.rows(n, 2 * dim, 0, -range, range));
    c.opds.push_back(as_output(g.rows(n, dim, 1)));
    out.push_back(std::move(c));
}

void gelu(Gen& g, std::vector<Case>& out, int64_t n, int64_t dim, const std::string& approx, bool in_place) {
    Case c = base("gelu", n, dim, " " + approx + (in_place ? " in-place" : ""));
    c.params["approx"] = pstr(approx);
    Operand x = g.rows(n, dim, 0, -8, 8);
    if (in_place) x.output = true;
    c.opds.push_back(x);
    c.opds.push_back(in_place ? alias_of(0, x) : as_output(g.rows(n, dim)));
    out.push_back(std::move(c));
}

// Logits soft-capped (Gemma 2), values well past the cap included.
void softcap(Gen& g, std::vector<Case>& out, int64_t n, int64_t dim, double cap, bool in_place) {
    Case c = base("softcap", n, dim, " cap=" + std::to_string(static_cast<int>(cap)) + (in_place ? " in-place" : ""));
    c.params["cap"] = pf64(cap);
    Operand x = g.rows(n, dim, 0, static_cast<float>(-4 * cap), static_cast<float>(4 * cap));
    if (in_place) x.output = true;
    c.opds.push_back(x);
    c.opds.push_back(in_place ? alias_of(0, x) : as_output(g.rows(n, dim)));
    out.push_back(std::move(c));
}

void add(Gen& g, std::vector<Case>& out, int64_t n, int64_t dim, int alias) {
    Case c = base("add", n, dim, alias < 0 ? "" : alias == 0 ? " y=a" : " y=b");
    c.tol = kExact;
    Operand a = g.rows(n, dim, 2), b = g.rows(n, dim, 2);
    if (alias == 0) a.output = true;
    if (alias == 1) b.output = true;
    c.opds.push_back(a);
    c.opds.push_back(b);
    c.opds.push_back(alias >= 0 ? alias_of(alias, a) : as_output(g.rows(n, dim, 1)));
    out.push_back(std::move(c));
}

void embed(Gen& g, std::vector<Case>& out, int64_t n, int64_t dim, int tdt, double scale, bool bad_id = false) {
    const int64_t vocab = 1000;
    Case c = base("embed", n, dim, std::string(" table=") + rad_dtype_name(tdt) + (scale != 1 ? " scale" : "") + (bad_id ? " bad-id" : ""));
    c.tol = kExact;
    c.params["vocab"] = pint(vocab);
    c.params["wdtype"] = pstr(rad_dtype_name(tdt));
    if (scale != 1) c.params["scale"] = pf64(scale);
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>(g.below(vocab)));
    if (bad_id) {
        ids.back() = static_cast<int32_t>(vocab);
        c.expect = RAD_E_ARG;
    }
    c.opds.push_back(i32(ids));
    c.opds.push_back(g.weight(tdt, vocab, dim));
    c.opds.push_back(as_output(g.rows(n, dim, 3)));
    out.push_back(std::move(c));
}

void gather(Gen& g, std::vector<Case>& out, int64_t n, int64_t dim, int64_t rows) {
    Case c = base("gather_rows", n, dim, " from=" + std::to_string(rows));
    c.tol = kExact;
    std::vector<int32_t> ids;
    for (int64_t i = 0; i < n; ++i) ids.push_back(static_cast<int32_t>(g.below(rows)));
    c.opds.push_back(g.rows(rows, dim, 4));
    c.opds.push_back(i32(ids));
    c.opds.push_back(as_output(g.rows(n, dim)));
    out.push_back(std::move(c));
}

}  // namespace

void rowwise_cases(Gen& g, std::vector<Case>& out) {
    for (int64_t n : kRows) {
        rms_norm(g, out, n, 896, 1, RAD_BF16, false, false);
        rms_norm(g, out, n, 4096, 1, RAD_F32, false, n == 3);
        layer_norm(g, out, n, 2048, RAD_F16, true, false);
        glu(g, out, "swiglu", n, 4864, 8);
        gelu(g, out, n, 896, "none", false);
        gelu(g, out, n, 896, "tanh", false);
        add(g, out, n, 896, -1);
        embed(g, out, n, 896, RAD_BF16, 1.0);
        gather(g, out, n, 896, 64);
    }
    rms_norm(g, out, 17, 1003, 1, RAD_F16, false, false);
    rms_norm(g, out, 17, 128, 16, RAD_BF16, false, false);  // per-head q/k norm
    rms_norm(g, out, 3, 64, 14, RAD_F32, false, true);
    rms_norm(g, out, 17, 2048, 1, RAD_BF16, true, false);  // Gemma
    layer_norm(g, out, 17, 1003, RAD_F32, false, false);
    layer_norm(g, out, 3, 896, RAD_BF16, true, true);
    glu(g, out, "swiglu", 17, 1003, 100);  // exp overflows in libref, clamps in libcpu
    glu(g, out, "geglu", 17, 4864, 8);
    glu(g, out, "geglu", 3, 1003, 30);
    glu(g, out, "swiglu", 1, 8, 4);
    gelu(g, out, 17, 1003, "none", true);
    gelu(g, out, 17, 3072, "tanh", true);
    gelu(g, out, 3, 5, "none", false);
    softcap(g, out, 3, 32000, 30.0, true);
    softcap(g, out, 2, 1003, 50.0, false);
    add(g, out, 17, 1003, 0);
    add(g, out, 17, 896, 1);
    embed(g, out, 17, 1003, RAD_F16, 45.25);
    embed(g, out, 3, 2048, RAD_F32, 1.0);
    embed(g, out, 3, 896, RAD_BF16, 1.0, true);
    gather(g, out, 17, 1003, 40);
}

}  // namespace avxcheck
