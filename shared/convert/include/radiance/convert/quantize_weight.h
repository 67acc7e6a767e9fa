// quantize_weight.h: one weight through a quantiser plugin into the container: the checkpoint's
// values widened to f32 a row block at a time, the quantiser's planes (plane 0 streamed to the
// file, the small later planes held), and the relative error of what was stored, decoded by the
// core (plain, affine) or by the quantiser's own decode hook.
#pragma once
#include <radiance/rad_quant.h>

#include <string>
#include <vector>

#include "radiance/container/container.h"

namespace radiance::convert {

// A weight's values as the checkpoint holds them: [rows x cols] of a float dtype, row-major. No
// data: the checkpoint stores the weight quantised, and the quantiser (import) reads it itself;
// what it writes is still decoded (a scheme nothing decodes is refused), but measured against
// nothing (the error is 0).
struct WeightValues {
    const uint8_t* data = nullptr;
    int dtype = 0;
    int64_t rows = 0, cols = 0;
};

// What a recipe line makes of one weight: the quantiser, its options and the encoding it chose.
struct WeightPlan {
    const RadQuantizerInfo* q = nullptr;
    std::vector<std::string> keys, vals;  // the options given (the quantiser applies its defaults)
    RadEncoding enc{};
};

struct WeightError {
    double rel_frobenius = 0;  // ||w - decoded|| / ||w|| (0 for an all-zero weight stored exactly)
    double max_abs = 0;        // the largest |w - decoded|
};

// Quantises `v` as `plan` says and writes it as tensor `name` of `shape` (logical dtype
// `logical_dtype`) to `w`. Throws radiance::Error naming the weight: a non-finite value (with its
// row), a quantiser's refusal, a row block that splits a plane's blocks, no decoder for the scheme.
WeightError quantize_weight(const std::string& name, const std::vector<int64_t>& shape, int logical_dtype, const WeightValues& v,
                            const WeightPlan& plan, container::Writer& w);

}  // namespace radiance::convert
