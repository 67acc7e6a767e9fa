#include "unicode.h"

#include "radiance/util/utf8.h"

namespace radiance::jinja::detail {

namespace {
constexpr char32_t kEscapeBase = 0xDC00;  // surrogateescape: byte b -> U+DC00+b

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }
}  // namespace

char32_t next_code_point(std::string_view s, size_t& pos) {
    const auto b0 = static_cast<unsigned char>(s[pos]);
    if (b0 < 0x80) {
        ++pos;
        return b0;
    }
    int len = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) {
        len = 2, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        len = 3, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        len = 4, cp = b0 & 0x07, min = 0x10000;
    }
    if (len == 0 || pos + len > s.size()) {
        ++pos;
        return kEscapeBase + b0;
    }
    for (int i = 1; i < len; ++i) {
        const auto b = static_cast<unsigned char>(s[pos + i]);
        if (!is_continuation(b)) {
            ++pos;
            return kEscapeBase + b0;
        }
        cp = (cp << 6) | (b & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are invalid UTF-8.
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        ++pos;
        return kEscapeBase + b0;
    }
    pos += len;
    return cp;
}

void append_utf8(std::string& out, char32_t cp) {
    if (cp >= 0xDC80 && cp <= 0xDCFF) {  // an escaped raw byte from invalid input
        out.push_back(static_cast<char>(cp - kEscapeBase));
    } else {
        util::append_utf8(out, cp);
    }
}

std::u32string to_u32(std::string_view s) {
    std::u32string out;
    out.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) out.push_back(next_code_point(s, pos));
    return out;
}

std::string to_utf8(std::u32string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char32_t c : s) append_utf8(out, c);
    return out;
}

size_t code_point_count(std::string_view s) {
    size_t n = 0;
    for (size_t pos = 0; pos < s.size(); ++n) next_code_point(s, pos);
    return n;
}

bool is_py_space(char32_t c) {
    if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) return true;
    if (c < 0x85) return false;
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

char32_t to_upper_cp(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') ? c - 32 : c;
    if (c == 0xB5) return 0x39C;                             // micro sign -> Greek capital mu
    if (c == 0xFF) return 0x178;                             // y with diaeresis
    if (c >= 0xE0 && c <= 0xFE && c != 0xF7) return c - 32;  // Latin-1 letters
    if (c >= 0x100 && c <= 0x17F) {                          // Latin Extended-A: pairs
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2 == 0) ? c - 1 : c;
        if (c == 0x131) return 'I';
        if (c == 0x17F) return 'S';
        if (c == 0x138 || c == 0x149) return c;
        return (c % 2 == 1) ? c - 1 : c;
    }
    if (c == 0x3C2) return 0x3A3;                 // final sigma
    if (c >= 0x3B1 && c <= 0x3C9) return c - 32;  // Greek
    if (c >= 0x3AC && c <= 0x3AF) return c == 0x3AC ? 0x386 : c - 37;
    if (c >= 0x430 && c <= 0x44F) return c - 32;  // Cyrillic
    if (c >= 0x450 && c <= 0x45F) return c - 80;
    return c;
}

char32_t to_lower_cp(char32_t c) {
    if (c < 0x80) return (c >= 'A' && c <= 'Z') ? c + 32 : c;
    if (c == 0x178) return 0xFF;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
    if (c >= 0x100 && c <= 0x17F) {
        if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2 == 1) ? c + 1 : c;
        if (c == 0x130) return 'i';
        if (c == 0x131 || c == 0x138 || c == 0x149 || c == 0x17F) return c;
        return (c % 2 == 0) ? c + 1 : c;
    }
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c >= 0x410 && c <= 0x42F) return c + 32;
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    return c;
}

bool is_cased(char32_t c) { return to_upper_cp(c) != c || to_lower_cp(c) != c || c == 0xDF; }

bool is_alpha_cp(char32_t c) {
    if (c < 0x80) return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (is_cased(c) || c == 0xAA || c == 0xBA) return true;
    // CJK, kana, hangul, Arabic, Hebrew, Devanagari...: letters without case.
    return (c >= 0x5D0 && c <= 0x5EA) || (c >= 0x620 && c <= 0x64A) || (c >= 0x904 && c <= 0x939) || (c >= 0x3041 && c <= 0x30FF) ||
           (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF);
}

bool is_digit_cp(char32_t c) { return c >= '0' && c <= '9'; }

bool is_word_cp(char32_t c) { return c == '_' || is_alpha_cp(c) || is_digit_cp(c); }

bool is_printable_cp(char32_t c) {
    if (c < 0x20 || c == 0x7F) return false;
    if (c < 0xA0) return c < 0x80;  // C1 controls
    if (c == 0xA0 || c == 0xAD) return false;
    if (c >= 0xD800 && c <= 0xDFFF) return false;  // surrogates (incl. escaped raw bytes)
    if (c == 0x1680 || (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202F) || (c >= 0x205F && c <= 0x206F) || c == 0x3000 ||
        c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB))
        return false;
    if (c >= 0xE000 && c <= 0xF8FF) return false;  // private use
    return c <= 0x10FFFF;
}

std::string py_upper(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) {
        const char32_t c = next_code_point(s, pos);
        if (c == 0xDF) {  // German sharp s upper-cases to "SS" in Python
            out += "SS";
        } else {
            append_utf8(out, to_upper_cp(c));
        }
    }
    return out;
}

std::string py_lower(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t pos = 0; pos < s.size();) append_utf8(out, to_lower_cp(next_code_point(s, pos)));
    return out;
}

namespace {
// Title case of one character; German sharp s becomes "Ss" as in Python.
void append_title(std::string& out, char32_t c) {
    if (c == 0xDF) {
        out += "Ss";
    } else {
        append_utf8(out, to_upper_cp(c));
    }
}
}  // namespace

std::string py_capitalize(std::string_view s) {
    std::string out;
    for (size_t pos = 0; pos < s.size();) {
        const bool first = pos == 0;
        const char32_t c = next_code_point(s, pos);
        if (first) {
            append_title(out, c);
        } else {
            append_utf8(out, to_lower_cp(c));
        }
    }
    return out;
}

std::string py_title(std::string_view s) {
    std::string out;
    bool prev_cased = false;
    for (size_t pos = 0; pos < s.size();) {
        const char32_t c = next_code_point(s, pos);
        if (prev_cased) {
            append_utf8(out, to_lower_cp(c));
        } else {
            append_title(out, c);
        }
        prev_cased = is_cased(c);
    }
    return out;
}

std::string py_strip(std::string_view s, const std::u32string* chars, bool left, bool right) {
    auto strip_it = [&](char32_t c) { return chars ? chars->find(c) != std::u32string::npos : is_py_space(c); };
    std::u32string cps = to_u32(s);
    size_t begin = 0;
    size_t end = cps.size();
    if (left)
        while (begin < end && strip_it(cps[begin])) ++begin;
    if (right)
        while (end > begin && strip_it(cps[end - 1])) --end;
    return to_utf8(std::u32string_view(cps).substr(begin, end - begin));
}

std::vector<std::string> py_splitlines(std::string_view s, bool keepends) {
    std::vector<std::string> lines;
    std::u32string cps = to_u32(s);
    size_t start = 0;
    size_t i = 0;
    while (i < cps.size()) {
        const char32_t c = cps[i];
        size_t brk = 0;
        if (c == '\r' && i + 1 < cps.size() && cps[i + 1] == '\n') {
            brk = 2;
        } else if (c == '\n' || c == '\r' || c == 0x0B || c == 0x0C || (c >= 0x1C && c <= 0x1E) || c == 0x85 || c == 0x2028 ||
                   c == 0x2029) {
            brk = 1;
        }
        if (brk == 0) {
            ++i;
            continue;
        }
        const size_t end = keepends ? i + brk : i;
        lines.push_back(to_utf8(std::u32string_view(cps).substr(start, end - start)));
        i += brk;
        start = i;
    }
    if (start < cps.size()) lines.push_back(to_utf8(std::u32string_view(cps).substr(start)));
    return lines;
}

}  // namespace radiance::jinja::detail
