// quantizers.h: libquant's quantisers, one file each, and what they share.
#pragma once
#include <radiance/rad_decode.h>
#include <radiance/rad_quant.h>

#include <cstdint>

namespace quant {

extern const RadQuantizerInfo kRtn;
extern const RadQuantizerInfo kGptq;
extern const RadQuantizerInfo kFp8;
extern const RadQuantizerInfo kCast;
extern const RadQuantizerInfo kGgml;
extern const RadQuantizerInfo kImport;

// Rows of a weight per quantize() call: about 4 Mi values, a whole number of `unit` rows (the
// rows one scale covers), so a large table streams in blocks of ~16 MiB of f32.
int64_t rows_per_block(int64_t cols, int64_t unit);

// Bytes of one row of plane `p` of a [rows x cols] weight.
uint64_t plane_pitch(const RadPlaneDesc& p, int64_t rows, int64_t cols);

// Round half to even: the codes' rounding (independent of the floating-point environment).
float round_even(float v);

}  // namespace quant
