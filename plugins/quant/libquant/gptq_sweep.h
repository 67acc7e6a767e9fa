// gptq_sweep.h: gptq's column sweep over a block of rows (gptq.cpp has the algorithm): each column
// quantised in order, its rounding error spread over the columns after it by U's row.
#pragma once
#include <cstdint>

#include "affine.h"

namespace quant {

// Where a row block's planes go and how its codes are chosen.
struct SweepPlanes {
    uint8_t* codes;
    uint64_t code_pitch;
    uint8_t* scale;
    uint64_t scale_pitch;
    uint8_t* zero;  // nullptr: symmetric codes
    uint64_t zero_pitch;
    int code_dt, sdt;  // (the code width is code_dt's)
    int64_t group;
};

// Rows [0, n) of w (n x K, row-major, columns in stored order; consumed) against U (K x K, upper).
// The same bytes as one row at a time, column by column, on any thread count and machine.
void gptq_sweep(const double* u, int64_t K, double* w, int64_t n, const SweepPlanes& out);

}  // namespace quant
