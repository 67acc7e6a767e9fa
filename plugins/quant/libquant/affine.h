// affine.h: the affine scheme's integer codes as rtn chooses them (rtn.cpp says why each choice),
// shared by rtn and gptq so that gptq writes exactly rtn's planes for the same options and the
// same values (with the identity as its Hessian it writes rtn's bytes).
#pragma once
#include <radiance/rad_quant.h>

#include <cstdint>

namespace quant {

// The encoding of rtn's options: codes i8 / i4 (zero = 0) or u8 / u4 with a zero point (zero = 1),
// a scale of dtype `sdt` per `group` columns (0: one a row). RAD_E_ARG for values out of range,
// RAD_E_SHAPE for a group that does not divide the row.
int affine_encoding(int64_t bits, int64_t group, int64_t zero, int sdt, int64_t rows, int64_t cols, RadEncoding* out);

// One group's scale (rounded to its stored dtype) and zero point.
struct AffineGroup {
    float scale = 0.0f;
    int32_t zero = 0;
};

// The code range of `bits`-bit codes, signed (no zero point) or unsigned.
struct CodeRange {
    float lo, hi;
};
CodeRange code_range(int bits, bool zero);

// The group of the n values x: symmetric (the value of largest magnitude is the most negative
// code) or, with a zero point, over the range widened to hold 0.
AffineGroup affine_group(const float* x, int64_t n, int bits, int sdt, bool zero);

// The stored code of v in group g (the zero point added, clamped to r), and the value the core's
// decoder makes of it: (code - zero) * scale in f32.
float affine_code(float v, const AffineGroup& g, CodeRange r);
inline float affine_value(float code, const AffineGroup& g) { return (code - static_cast<float>(g.zero)) * g.scale; }

}  // namespace quant
