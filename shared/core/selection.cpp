#include "radiance/core/selection.h"

#include "radiance/core/constraint.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "radiance/util/strings.h"

namespace radiance::core {
namespace {

std::string row_label(const KernelRow& r) { return r.lib->plugin->name + ":" + (r.info->name ? r.info->name : "?"); }

const RadParamSpec* param_spec(const RadOpSchema* s, const std::string& name) {
    for (int i = 0; s && i < s->n_params; ++i)
        if (name == s->params[i].name) return &s->params[i];
    return nullptr;
}

// Why row `r` does not serve band [lo, hi], or "" if it does. Fills `derived` for a match.
std::string mismatch(const KernelRow& r, const Geometry& g, int64_t lo, int64_t hi, const SelectOptions& opt, const RadOpSchema* schema,
                     std::map<std::string, int64_t>* derived) {
    if (std::find(opt.domains.begin(), opt.domains.end(), r.info->domain) == opt.domains.end())
        return r.info->domain == RAD_DOMAIN_DEVICE ? "runs on a device this process does not have"
                                                   : "runs on a domain this process does not use";
    for (int i = 0; i < r.info->n_constraints; ++i) {
        const RadConstraint& c = r.info->constraints[i];
        std::string key = c.key ? c.key : "";
        if (!g.ranged.empty() && key == g.ranged) {
            bool ok = false;
            switch (c.op) {
            case RAD_C_LE: ok = hi <= c.value; break;
            case RAD_C_GE: ok = lo >= c.value; break;
            case RAD_C_EQ: ok = lo == hi && lo == c.value; break;
            default: ok = lo == hi && constraint_holds(c, lo); break;  // DIV/IN are not intervals
            }
            if (!ok)
                return "constraint " + describe_constraint(c) + " fails for " + key + " in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]";
            continue;
        }
        if (str::starts_with(key, "device.")) {
            auto f = opt.facts.find(key);
            if (f == opt.facts.end()) return "constraint " + describe_constraint(c) + ": fact " + key + " was not measured";
            if (!constraint_holds(c, f->second))
                return "constraint " + describe_constraint(c) + " fails: " + key + " is " + std::to_string(f->second);
            continue;
        }
        auto p = g.params.find(key);
        if (p == g.params.end()) {
            const RadParamSpec* spec = param_spec(schema, key);
            if (spec && spec->need == RAD_DERIVED && c.op == RAD_C_EQ) {
                (*derived)[key] = c.value;  // the winner supplies the derived parameter
                continue;
            }
            return "constraint " + describe_constraint(c) + ": the op declares no " + key;
        }
        const ParamValue& v = p->second;
        bool ok = false;
        if (v.type == RAD_P_STR)
            ok = c.op == RAD_C_IN && in_constraint_set(c.set, v.s);
        else if (v.type == RAD_P_F64)
            ok = c.op != RAD_C_IN && c.op != RAD_C_DIV && constraint_holds(c, static_cast<int64_t>(v.f)) &&
                 static_cast<double>(static_cast<int64_t>(v.f)) == v.f;
        else
            ok = constraint_holds(c, v.i);
        if (!ok) {
            std::string shown = v.type == RAD_P_STR ? v.s : v.type == RAD_P_F64 ? std::to_string(v.f) : std::to_string(v.i);
            return "constraint " + describe_constraint(c) + " fails: " + key + " is " + shown;
        }
    }
    return "";
}

}  // namespace

const Band* Resolution::band_for(int64_t v) const {
    for (auto& b : bands)
        if (v >= b.lo && v <= b.hi) return &b;
    return nullptr;
}

Resolution resolve(const Registry& reg, const Geometry& g, const SelectOptions& opt) {
    Resolution res;
    res.op = g.op;
    res.ranged = g.ranged;
    const RadOpSchema* schema = reg.schema(g.op);
    if (!schema) {
        res.error = "op '" + g.op + "' is declared by no loaded kernel library";
        return res;
    }
    if (opt.refused_ops.count(g.op)) {
        res.error = "op '" + g.op + "' is refused by this plan (the calibration tap needs its projections unfused)";
        return res;
    }
    // The geometry must speak the schema: every required parameter present, nothing unknown.
    for (int i = 0; i < schema->n_params; ++i) {
        const RadParamSpec& ps = schema->params[i];
        bool have = g.params.count(ps.name) || g.ranged == ps.name;
        if (ps.need == RAD_REQUIRED && !have) {
            res.error = "op '" + g.op + "' needs parameter '" + ps.name + "'";
            return res;
        }
    }
    for (auto& [k, v] : g.params)
        if (!param_spec(schema, k)) {
            res.error = "op '" + g.op + "' has no parameter '" + k + "'";
            return res;
        }
    if (!g.ranged.empty() && !param_spec(schema, g.ranged)) {
        res.error = "op '" + g.op + "' has no parameter '" + g.ranged + "' to range over";
        return res;
    }
    if (!g.ranged.empty() && g.lo > g.hi) {
        res.error = "op '" + g.op + "': empty range for " + g.ranged;
        return res;
    }

    std::vector<const KernelRow*> rows;
    for (auto& lib : reg.kernel_libraries())
        for (auto& r : lib.rows)
            if (g.op == r.info->op) rows.push_back(&r);

    // Band boundaries from every candidate's interval constraints on the ranged parameter.
    std::set<int64_t> starts{g.lo};
    if (!g.ranged.empty()) {
        for (auto* r : rows)
            for (int i = 0; i < r->info->n_constraints; ++i) {
                const RadConstraint& c = r->info->constraints[i];
                if (!c.key || g.ranged != c.key) continue;
                if (c.op == RAD_C_LE) starts.insert(c.value + 1);
                if (c.op == RAD_C_GE) starts.insert(c.value);
                if (c.op == RAD_C_EQ) {
                    starts.insert(c.value);
                    starts.insert(c.value + 1);
                }
            }
    }
    std::vector<int64_t> s;
    for (int64_t v : starts)
        if (v >= g.lo && v <= g.hi) s.push_back(v);

    for (size_t bi = 0; bi < s.size(); ++bi) {
        Band band;
        band.lo = s[bi];
        band.hi = bi + 1 < s.size() ? s[bi + 1] - 1 : g.hi;
        std::vector<std::pair<const KernelRow*, std::string>> verdicts;
        for (auto* r : rows) {
            std::map<std::string, int64_t> d;
            verdicts.emplace_back(r, mismatch(*r, g, band.lo, band.hi, opt, schema, &d));
        }
        // The first library (hierarchy order) with a matching row supplies the band;
        // within it, the highest priority, then declaration order.
        const KernelRow* win = nullptr;
        for (auto& [r, why] : verdicts) {
            if (!why.empty()) continue;
            if (!win) {
                win = r;
                continue;
            }
            if (r->lib != win->lib) continue;
            if (r->info->priority > win->info->priority) win = r;
        }
        for (auto& [r, why] : verdicts) {
            if (r == win) continue;
            std::string reason = why;
            if (reason.empty()) {
                if (r->lib != win->lib)
                    reason = "library '" + win->lib->plugin->name + "' comes first in the kernel hierarchy and serves this band";
                else
                    reason = "lower priority " + std::to_string(r->info->priority) + " (or later declaration) than " + row_label(*win) +
                             " at " + std::to_string(win->info->priority);
            }
            band.others.push_back({r, reason});
        }
        band.winner = win;
        if (win) mismatch(*win, g, band.lo, band.hi, opt, schema, &band.derived);
        std::string where =
            g.ranged.empty() ? "" : " for " + g.ranged + " in [" + std::to_string(band.lo) + ", " + std::to_string(band.hi) + "]";
        if (!win && res.error.empty()) {
            // Why the rows of the domains in use declined (a constraint, such as a KV cache dtype a
            // card's attention cannot read): the startup error then says what to change.
            std::string why;
            int shown = 0;
            for (auto& [r, reason] : verdicts)
                if (std::find(opt.domains.begin(), opt.domains.end(), r->info->domain) != opt.domains.end() && shown++ < 3)
                    why += (why.empty() ? ": " : "; ") + row_label(*r) + ": " + reason;
            res.error = "no kernel row serves op '" + g.op + "'" + where + why +
                        (rows.empty() ? " (no library has a row for it)" : " (see --debug-selection)");
        }
        if (win && win->reference && !opt.accept_reference && res.error.empty())
            res.error = "op '" + g.op + "'" + where + " is served only by reference row " + row_label(*win) +
                        "; reference kernels do not serve without --debug-accept-reference-kernels";
        // Merge with the previous band when the same row wins for the same reasons.
        if (!res.bands.empty() && res.bands.back().winner == win && res.bands.back().hi + 1 == band.lo &&
            res.bands.back().derived == band.derived) {
            res.bands.back().hi = band.hi;
            continue;
        }
        res.bands.push_back(std::move(band));
    }
    return res;
}

std::string explain(const Resolution& r) {
    std::ostringstream os;
    os << "op " << r.op << "\n";
    for (auto& b : r.bands) {
        os << "  band";
        if (!r.ranged.empty()) os << " " << r.ranged << " in [" << b.lo << ", " << b.hi << "]";
        os << ": ";
        if (b.winner)
            os << "winner " << row_label(*b.winner) << " (priority " << b.winner->info->priority
               << (b.winner->reference ? ", reference" : "") << ")\n";
        else
            os << "NO ROW\n";
        for (auto& c : b.others) os << "    " << row_label(*c.row) << " lost: " << c.why_lost << "\n";
    }
    if (!r.ok()) os << "  error: " << r.error << "\n";
    return os.str();
}

}  // namespace radiance::core
