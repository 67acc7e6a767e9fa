#include "ggml_blocks.h"

#include <cstring>

#include "gguf_file.h"
#include <radiance/rad_plugin.h>

namespace quant {
namespace {

float f16_at(const uint8_t* p) {
    uint16_t h;
    std::memcpy(&h, p, 2);
    return rad_f16_to_f32(h);
}

// Q4_K and Q5_K's 12 bytes k of scales and mins, 6 bits each for sub-blocks 0-7: sub-blocks 0-3
// keep theirs in the low 6 bits of k[j] (scale) and k[j + 4] (min); sub-blocks 4-7 take the low
// and high nibbles of k[j + 4] for their low 4 bits, and the top 2 bits of k[j - 4] (scale) and
// k[j] (min) for their high 2.
void scale_min_k(const uint8_t* k, int j, int* sc, int* mn) {
    if (j < 4) {
        *sc = k[j] & 63;
        *mn = k[j + 4] & 63;
    } else {
        *sc = (k[j + 4] & 15) | ((k[j - 4] >> 6) << 4);
        *mn = (k[j + 4] >> 4) | ((k[j] >> 6) << 4);
    }
}

// Q4_K (qh null) and Q5_K: 8 sub-blocks of 32, each its scale d * sc and minimum dmin * mn (both
// exact in f32: an f16 times a 6-bit integer), written for its two halves of 16.
void row_k(const uint8_t* src, int64_t cols, bool five, int8_t* q, float* s, float* m) {
    const int64_t bytes = five ? 176 : 144;
    for (int64_t b = 0; b < cols / 256; ++b, src += bytes, q += 256, s += 16, m += 16) {
        const float d = f16_at(src), dmin = f16_at(src + 2);
        const uint8_t* k = src + 4;
        const uint8_t* qh = five ? src + 16 : nullptr;
        const uint8_t* nib = src + (five ? 48 : 16);
        for (int j = 0; j < 8; ++j) {
            int sc, mn;
            scale_min_k(k, j, &sc, &mn);
            s[2 * j] = s[2 * j + 1] = d * static_cast<float>(sc);
            m[2 * j] = m[2 * j + 1] = dmin * static_cast<float>(mn);
        }
        for (int c = 0; c < 4; ++c)  // a 64-value chunk: 32 bytes, low nibbles first
            for (int l = 0; l < 32; ++l) {
                const uint8_t byte = nib[32 * c + l];
                int lo = byte & 15, hi = byte >> 4;
                if (qh) {
                    lo |= ((qh[l] >> (2 * c)) & 1) << 4;
                    hi |= ((qh[l] >> (2 * c + 1)) & 1) << 4;
                }
                q[64 * c + l] = static_cast<int8_t>(lo);
                q[64 * c + 32 + l] = static_cast<int8_t>(hi);
            }
    }
}

// Q6_K: two halves of 128 values, each from 64 bytes of ql and 32 of qh. In a half, value
// 32 * i + l (i = 0..3, l = 0..31) has its low 4 bits in ql[l + 32 * (i & 1)] (low nibble for
// i < 2, high for i >= 2) and its high 2 bits at bits 2i of qh[l]; scale 16 values apiece.
void row_q6_k(const uint8_t* src, int64_t cols, int8_t* q, float* s, float* m) {
    for (int64_t b = 0; b < cols / 256; ++b, src += 210, q += 256, s += 16, m += 16) {
        const uint8_t *ql = src, *qh = src + 128;
        const auto* sc = reinterpret_cast<const int8_t*>(src + 192);
        const float d = f16_at(src + 208);
        for (int i = 0; i < 16; ++i) {
            s[i] = d * static_cast<float>(sc[i]);  // exact: an f16 times an int8
            m[i] = 0.0f;
        }
        for (int h = 0; h < 2; ++h)
            for (int i = 0; i < 4; ++i)
                for (int l = 0; l < 32; ++l) {
                    const uint8_t lowbyte = ql[64 * h + l + 32 * (i & 1)];
                    const int low = i < 2 ? lowbyte & 15 : lowbyte >> 4;
                    const int high = (qh[32 * h + l] >> (2 * i)) & 3;
                    q[128 * h + 32 * i + l] = static_cast<int8_t>((low | (high << 4)) - 32);
                }
    }
}

// Q8_0 and Q4_0: blocks of 32, one f16 scale for both halves of 16.
void row_32(const uint8_t* src, int64_t cols, bool eight, int8_t* q, float* s, float* m) {
    for (int64_t b = 0; b < cols / 32; ++b, q += 32, s += 2, m += 2) {
        s[0] = s[1] = f16_at(src);
        m[0] = m[1] = 0.0f;
        if (eight) {
            std::memcpy(q, src + 2, 32);
            src += 34;
        } else {
            for (int j = 0; j < 16; ++j) {
                q[j] = static_cast<int8_t>((src[2 + j] & 15) - 8);
                q[j + 16] = static_cast<int8_t>((src[2 + j] >> 4) - 8);
            }
            src += 18;
        }
    }
}

// Q4_1, Q5_0 and Q5_1: blocks of 32 with nibbles as Q4_0's (value j < 16 the low nibble of byte
// j, value j + 16 its high one), Q5's fifth bits in a little-endian 32-bit qh (bit j for value j),
// Q5_0's codes centred by - 16, and _1's minimum m added (the planes' min, subtracted, is -m).
void row_32_min(const uint8_t* src, int64_t cols, bool five, bool with_min, int8_t* q, float* s, float* m) {
    const int64_t bytes = 2 + (with_min ? 2 : 0) + (five ? 4 : 0) + 16;
    for (int64_t b = 0; b < cols / 32; ++b, src += bytes, q += 32, s += 2, m += 2) {
        s[0] = s[1] = f16_at(src);
        m[0] = m[1] = with_min ? -f16_at(src + 2) : 0.0f;
        const uint8_t* p = src + (with_min ? 4 : 2);
        uint32_t qh = 0;
        if (five) std::memcpy(&qh, p, 4), p += 4;
        for (int j = 0; j < 16; ++j) {
            int lo = p[j] & 15, hi = p[j] >> 4;
            if (five) {
                lo |= static_cast<int>((qh >> j) & 1) << 4;
                hi |= static_cast<int>((qh >> (j + 16)) & 1) << 4;
            }
            const int centre = five && !with_min ? 16 : 0;
            q[j] = static_cast<int8_t>(lo - centre);
            q[j + 16] = static_cast<int8_t>(hi - centre);
        }
    }
}

}  // namespace

bool is_block_type(uint32_t type) { return block_values(type) != 0; }

int64_t block_values(uint32_t type) {
    switch (type) {
    case kGgmlQ8_0:
    case kGgmlQ4_0:
    case kGgmlQ4_1:
    case kGgmlQ5_0:
    case kGgmlQ5_1: return 32;
    case kGgmlQ4_K:
    case kGgmlQ5_K:
    case kGgmlQ6_K: return 256;
    default: return 0;
    }
}

int64_t block_bytes(uint32_t type) {
    switch (type) {
    case kGgmlQ8_0: return 34;
    case kGgmlQ4_0: return 18;
    case kGgmlQ4_1: return 20;
    case kGgmlQ5_0: return 22;
    case kGgmlQ5_1: return 24;
    case kGgmlQ4_K: return 144;
    case kGgmlQ5_K: return 176;
    case kGgmlQ6_K: return 210;
    default: return 0;
    }
}

bool has_min(uint32_t type) { return type == kGgmlQ4_1 || type == kGgmlQ5_1 || type == kGgmlQ4_K || type == kGgmlQ5_K; }

void unpack_row(uint32_t type, const uint8_t* src, int64_t cols, int8_t* q, float* s, float* m) {
    switch (type) {
    case kGgmlQ8_0: return row_32(src, cols, true, q, s, m);
    case kGgmlQ4_0: return row_32(src, cols, false, q, s, m);
    case kGgmlQ4_1: return row_32_min(src, cols, false, true, q, s, m);
    case kGgmlQ5_0: return row_32_min(src, cols, true, false, q, s, m);
    case kGgmlQ5_1: return row_32_min(src, cols, true, true, q, s, m);
    case kGgmlQ4_K: return row_k(src, cols, false, q, s, m);
    case kGgmlQ5_K: return row_k(src, cols, true, q, s, m);
    case kGgmlQ6_K: return row_q6_k(src, cols, q, s, m);
    }
}

}  // namespace quant
