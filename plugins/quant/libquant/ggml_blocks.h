// ggml_blocks.h: one row of a GGUF tensor's quantised blocks unpacked into the affine scheme's
// numbers, exactly: integer codes q, and per 16 values a scale s and a minimum m, such that ggml's
// own dequantisation of value j is q[j] * s[j / 16] - m[j / 16] (m is 0 for the types without one).
// Every scale and minimum is the product of an f16 and a small integer, which f32 holds exactly,
// and every q * s fits f32's mantissa, so the affine decoder's order (q * s, then - m, each rounded
// to f32) gives ggml's bits. Written from the published block layouts (ggml-common.h's structs,
// ggml-quants.c's dequantize_row_*):
//
//   Q8_0  32 values in 34 bytes: f16 d, 32 int8 q;                       w = d * q
//   Q4_0  32 values in 18 bytes: f16 d, 16 bytes of nibbles;             w = d * (n - 8)
//         (value j < 16 the low nibble of byte j, value j + 16 its high nibble)
//   Q4_1  32 values in 20 bytes: f16 d, f16 m, 16 bytes of nibbles (as Q4_0's); w = d * n + m
//   Q5_0  32 values in 22 bytes: f16 d, 32 bits qh (value j's fifth bit is bit j), Q4_0's 16
//         bytes of nibbles;                                              w = d * (q - 16)
//   Q5_1  32 values in 24 bytes: f16 d, f16 m, then Q5_0's qh and nibbles; w = d * q + m
//         (the minimum here is added: the planes' min is -m, exact)
//   Q4_K  256 values in 144 bytes: f16 d, f16 dmin, 12 bytes of 6-bit scales and mins for 8
//         sub-blocks of 32, 128 bytes of nibbles;                          w = d * sc * n - dmin * mn
//         (64 values a 32-byte chunk: its low nibbles values 0-31, its high nibbles 32-63)
//   Q5_K  256 values in 176 bytes: Q4_K's, plus 32 bytes qh of fifth bits between the scales and
//         the nibbles (chunk c's low-nibble values take bit 2c of qh[l], its high ones bit 2c + 1)
//   Q6_K  256 values in 210 bytes: 128 bytes ql of low nibbles, 64 bytes qh of 2-bit highs, 16
//         int8 scales (one a 16 values), f16 d;                           w = d * sc * (q - 32)
#pragma once
#include <cstdint>

namespace quant {

// The ggml types a row of which unpack_row reads.
bool is_block_type(uint32_t type);
// Values a block of `type` holds (32 or 256), and its bytes; 0 for another type.
int64_t block_values(uint32_t type);
int64_t block_bytes(uint32_t type);
// Whether the type carries a minimum (Q4_1, Q5_1, Q4_K, Q5_K).
bool has_min(uint32_t type);

// Unpacks the `cols / block_values(type)` blocks at src: q[cols], s[cols / 16], m[cols / 16]
// (cols a multiple of the block).
void unpack_row(uint32_t type, const uint8_t* src, int64_t cols, int8_t* q, float* s, float* m);

}  // namespace quant
