// check_case.h: one rad-avx-check case (an op, its parameters and operands), the builders the
// case lists use, running a case through a kernel row, and comparing outputs.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "kernel_lib.h"

namespace avxcheck {

struct Operand {
    int dtype = RAD_F32;
    int rank = 1;
    int64_t shape[RAD_MAX_RANK] = {};
    int64_t pitch = 0;           // bytes between rows (0: dense)
    std::vector<uint8_t> bytes;  // the whole buffer, padding between rows included
    int alias = -1;              // shares the buffer of this operand (in-place launches)
    bool absent = false;         // an optional operand left out
    bool output = false;         // compared against libref after the launch
};

struct Case {
    std::string op, label;
    Params params;
    std::vector<Operand> opds;  // in the schema's order
    double tol = 0;             // relative L2 error allowed (see tolerances in main.cpp)
    int expect = RAD_OK;        // the status both libraries must return
};

// Deterministic random operands.
class Gen {
public:
    explicit Gen(uint64_t seed) : rng_(seed) {}
    float uniform(float lo, float hi) { return std::uniform_real_distribution<float>(lo, hi)(rng_); }
    int64_t below(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(rng_); }
    std::mt19937_64& rng() { return rng_; }

    // [rows, cols] f32 activations in U(lo, hi), `pad` extra (random) floats per row.
    Operand rows(int64_t rows, int64_t cols, int64_t pad = 0, float lo = -1, float hi = 1);
    // [rows, cols] dense weights of dtype dt, values U(lo, hi) rounded to dt.
    Operand weight(int dt, int64_t rows, int64_t cols, float lo = -1, float hi = 1);
    Operand vector(int dt, int64_t n, float lo = -1, float hi = 1);
    // A 4-D [d0, d1, d2, d3] dense buffer of dtype dt (a KV cache).
    Operand cache(int dt, int64_t d0, int64_t d1, int64_t d2, int64_t d3);

private:
    void fill(Operand& o, int64_t n_elems, float lo, float hi);
    std::mt19937_64 rng_;
};

Operand i32(const std::vector<int32_t>& v);
Operand i32_2d(const std::vector<int32_t>& v, int64_t rows, int64_t cols);
Operand absent();
Operand alias_of(int other, const Operand& shape_like);
inline Operand as_output(Operand o) {
    o.output = true;
    return o;
}

ParamValue pint(int64_t v);
ParamValue pf64(double v);
ParamValue pstr(const std::string& v);

struct Outcome {
    int rc = 0;
    std::vector<std::vector<uint8_t>> buffers;  // every operand's buffer after the launch
};

// Runs `row` of `lib` on fresh copies of the case's operands.
Outcome launch(const Case& c, const KernelLib& lib, const RadKernelInfo* row, const Params& derived);

// The largest relative L2 error ||got - want|| / ||want|| over the case's outputs (their whole
// buffers, so writes into row padding count); infinity on NaN or a size mismatch.
double max_rel_err(const Case& c, const Outcome& got, const Outcome& want);

}  // namespace avxcheck
