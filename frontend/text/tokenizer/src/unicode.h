// unicode.h: UTF-8 handling and the Unicode algorithms the tokenizer pipeline needs
// (normalisation forms, lowercase, a few character classes), on top of unicode_tables.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "radiance/util/utf8.h"

namespace radiance::text::unicode {

constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes the code point starting at s[i] and advances i. The input must be valid UTF-8
// (everything past the tokenizer's entry point is).
inline char32_t next_code_point(std::string_view s, size_t& i) {
    auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
        ++i;
        return b;
    }
    if (b < 0xE0) {
        char32_t c = ((b & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
        i += 2;
        return c;
    }
    if (b < 0xF0) {
        char32_t c =
            ((b & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
        i += 3;
        return c;
    }
    char32_t c = ((b & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
                 ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
    i += 4;
    return c;
}

// Byte length of the UTF-8 sequence that starts with this (valid) lead byte.
inline size_t sequence_length(unsigned char lead) { return lead < 0x80 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4; }

using util::append_utf8;  // radiance/util/utf8.h

bool is_valid_utf8(std::string_view s);

// Appends bytes as UTF-8, replacing every maximal ill-formed subpart with U+FFFD
// (the Unicode recommendation; identical to Rust's String::from_utf8_lossy).
void append_lossy(std::string& out, std::string_view bytes);

enum class Form { NFC, NFD, NFKC, NFKD };

// Normalises valid UTF-8 text. NFC has a fast path that copies text needing no work.
std::string normalize(std::string_view s, Form form);

// Per code point full lowercase mapping (Rust char::to_lowercase, no final-sigma rule).
std::string lowercase(std::string_view s);

// Removes combining (general category M*) marks.
std::string strip_combining_marks(std::string_view s);

bool is_whitespace(char32_t c);  // Unicode White_Space (Rust char::is_whitespace)
bool is_numeric(char32_t c);     // general category N* (Rust char::is_numeric)
bool is_combining_mark(char32_t c);

}  // namespace radiance::text::unicode
