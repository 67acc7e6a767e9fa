// utf8_ranges.h: a code point range as UTF-8 byte-range sequences, so character sets compile to
// byte automata: every code point in [lo, hi] (surrogates left out) is encoded by exactly one
// sequence, a run of 1-4 byte ranges ([C2-DF][80-BF] for U+0080..U+07FF).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace radiance::grammar {

struct ByteRange {
    uint8_t lo = 0, hi = 0;
};

struct ByteSeq {
    ByteRange r[4];
    int n = 0;
};

void utf8_sequences(uint32_t lo, uint32_t hi, std::vector<ByteSeq>& out);

// Appends the UTF-8 encoding of code point c (c <= 0x10FFFF, not a surrogate).
void append_utf8(std::string& out, uint32_t c);

// Decodes one code point at s[i]; advances i. -1 (and i past the bad byte) for invalid UTF-8.
int32_t next_code_point(std::string_view s, size_t& i);

}  // namespace radiance::grammar
