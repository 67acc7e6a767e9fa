#include "utf8_ranges.h"

namespace radiance::grammar {

namespace {

int encoded_length(uint32_t c) { return c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4; }

int encode(uint32_t c, uint8_t* b) {
    const int n = encoded_length(c);
    if (n == 1) {
        b[0] = static_cast<uint8_t>(c);
    } else {
        for (int i = n - 1; i > 0; --i) {
            b[i] = static_cast<uint8_t>(0x80 | (c & 0x3F));
            c >>= 6;
        }
        b[0] = static_cast<uint8_t>((n == 2 ? 0xC0 : n == 3 ? 0xE0 : 0xF0) | c);
    }
    return n;
}

// [lo, hi] within one encoded length: split until every byte position spans a full range below
// the first one that differs (RE2's construction), then one sequence.
void split(uint32_t lo, uint32_t hi, std::vector<ByteSeq>& out) {
    if (lo > hi) return;
    // surrogates are not characters
    if (lo <= 0xDFFF && hi >= 0xD800) {
        if (lo < 0xD800) split(lo, 0xD7FF, out);
        if (hi > 0xDFFF) split(0xE000, hi, out);
        return;
    }
    static const uint32_t kEdges[] = {0x7F, 0x7FF, 0xFFFF};
    for (uint32_t e : kEdges)
        if (lo <= e && hi > e) {
            split(lo, e, out);
            split(e + 1, hi, out);
            return;
        }
    const int n = encoded_length(lo);
    for (int i = 1; i < n; ++i) {
        const uint32_t m = (1u << (6 * i)) - 1;
        if ((lo & ~m) != (hi & ~m)) {
            if ((lo & m) != 0) {
                split(lo, lo | m, out);
                split((lo | m) + 1, hi, out);
                return;
            }
            if ((hi & m) != m) {
                split(lo, (hi & ~m) - 1, out);
                split(hi & ~m, hi, out);
                return;
            }
        }
    }
    uint8_t a[4], b[4];
    encode(lo, a);
    encode(hi, b);
    ByteSeq s;
    s.n = n;
    for (int i = 0; i < n; ++i) s.r[i] = {a[i], b[i]};
    out.push_back(s);
}

}  // namespace

void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<ByteSeq>& out) { split(lo, hi > 0x10FFFF ? 0x10FFFF : hi, out); }

void append_utf8(std::string& out, uint32_t c) {
    uint8_t b[4];
    const int n = encode(c, b);
    out.append(reinterpret_cast<const char*>(b), static_cast<size_t>(n));
}

int32_t next_code_point(std::string_view s, size_t& i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) return ++i, b0;
    int n = b0 >= 0xC2 && b0 <= 0xDF ? 2 : b0 >= 0xE0 && b0 <= 0xEF ? 3 : b0 >= 0xF0 && b0 <= 0xF4 ? 4 : 0;
    if (n == 0 || i + static_cast<size_t>(n) > s.size()) return ++i, -1;
    uint32_t c = b0 & (0x7F >> n);
    for (int k = 1; k < n; ++k) {
        const auto b = static_cast<unsigned char>(s[i + static_cast<size_t>(k)]);
        if ((b & 0xC0) != 0x80) return ++i, -1;
        c = (c << 6) | (b & 0x3F);
    }
    // overlong forms, surrogates and code points past U+10FFFF are not UTF-8
    if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10FFFF)) || (c >= 0xD800 && c <= 0xDFFF)) return ++i, -1;
    i += static_cast<size_t>(n);
    return static_cast<int32_t>(c);
}

}  // namespace radiance::grammar
