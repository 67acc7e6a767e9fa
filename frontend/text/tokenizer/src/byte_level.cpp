// byte_level.cpp: the table is built once, exactly as GPT-2's bytes_to_unicode(): printable
// Latin-1 bytes stand for themselves, the other 68 bytes map to U+0100 upwards in order.
#include "byte_level.h"

#include <array>

#include "unicode.h"

namespace radiance::text::byte_level {
namespace {

struct Table {
    std::array<char32_t, 256> chars{};
    std::array<char, 512> utf8{};  // two bytes per entry
    std::array<uint8_t, 256> utf8_len{};
    std::array<int16_t, 512> bytes{};  // code point (< 0x200) -> byte, -1 when none

    Table() {
        auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
        bytes.fill(-1);
        int n = 0;
        for (int b = 0; b < 256; ++b) {
            chars[b] = printable(b) ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + n++);
            std::string s;
            unicode::append_utf8(s, chars[b]);
            utf8_len[b] = static_cast<uint8_t>(s.size());
            utf8[2 * b] = s[0];
            utf8[2 * b + 1] = s.size() > 1 ? s[1] : 0;
            bytes[chars[b]] = static_cast<int16_t>(b);
        }
    }
};

const Table& table() {
    static const Table t;
    return t;
}

}  // namespace

std::string_view char_for_byte(uint8_t b) {
    const Table& t = table();
    return {&t.utf8[2 * b], t.utf8_len[b]};
}

void append_encoded(std::string& out, std::string_view s) {
    const Table& t = table();
    // Write into the string directly: an append call per byte costs more than the mapping.
    size_t at = out.size();
    out.resize(at + 2 * s.size());
    char* p = out.data() + at;
    for (char c : s) {
        auto b = static_cast<uint8_t>(c);
        p[0] = t.utf8[2 * b];
        p[1] = t.utf8[2 * b + 1];
        p += t.utf8_len[b];
    }
    out.resize(static_cast<size_t>(p - out.data()));
}

std::string encode(std::string_view s) {
    std::string out;
    out.reserve(s.size() + s.size() / 2);
    append_encoded(out, s);
    return out;
}

int byte_for_char(char32_t c) { return c < 512 ? table().bytes[c] : -1; }

}  // namespace radiance::text::byte_level
