// selection.h: which kernel row serves each band of an op.
//
// Rows are matched by their constraints per band of the op's one ranged parameter; band
// boundaries come from the LE/GE/EQ constraints on that parameter (DIV and IN are not intervals:
// on the ranged parameter they hold only for a single-value band). Priority breaks ties within one
// library; between libraries the hierarchy is absolute: the first library with any matching row
// supplies the band. Reference rows serve only with accept_reference (the
// --debug-accept-reference-kernels flag).
#pragma once
#include <map>
#include <set>
#include <string>
#include <vector>

#include "radiance/core/registry.h"

namespace radiance::core {

struct ParamValue {
    int type = RAD_P_INT;
    int64_t i = 0;
    double f = 0;
    std::string s;
    static ParamValue of_int(int64_t v) {
        ParamValue p;
        p.i = v;
        return p;
    }
    static ParamValue of_f64(double v) {
        ParamValue p;
        p.type = RAD_P_F64;
        p.f = v;
        return p;
    }
    static ParamValue of_str(std::string v) {
        ParamValue p;
        p.type = RAD_P_STR;
        p.s = std::move(v);
        return p;
    }
};

// An op as declared: fixed parameters and at most one ranged extent [lo, hi].
struct Geometry {
    std::string op;
    std::map<std::string, ParamValue> params;
    std::string ranged;  // empty: no ranged parameter (one band)
    int64_t lo = 0, hi = 0;
};

struct SelectOptions {
    std::vector<int> domains{RAD_DOMAIN_HOST};  // domains this process can run
    std::map<std::string, int64_t> facts;       // device.* facts
    bool accept_reference = false;
    // Ops no row may serve, whatever the libraries declare (the op then fails to resolve, and an
    // architecture that asked rad_op_resolved takes its unfused path): the calibration tap's plan
    // refuses the fusions that hide a projection's input (EngineOptions::calib_dir).
    std::set<std::string> refused_ops;
};

struct Candidate {
    const KernelRow* row = nullptr;
    std::string why_lost;  // empty for the winner
};

struct Band {
    int64_t lo = 0, hi = 0;
    const KernelRow* winner = nullptr;
    std::vector<Candidate> others;           // every other row of the op, and why it lost
    std::map<std::string, int64_t> derived;  // RAD_DERIVED parameters the winner fixed (RAD_C_EQ)
};

struct Resolution {
    std::string op;
    std::string ranged;
    std::vector<Band> bands;  // adjacent bands with one winner are merged
    std::string error;        // non-empty: some band has no servable row, or the geometry is invalid
    bool ok() const { return error.empty(); }
    const Band* band_for(int64_t v) const;
};

Resolution resolve(const Registry& reg, const Geometry& g, const SelectOptions& opt);

// The --debug-selection text: per band, the winner and why every other candidate lost.
std::string explain(const Resolution& r);

}  // namespace radiance::core
