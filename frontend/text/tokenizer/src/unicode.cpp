// unicode.cpp: UTF-8 validation/repair and Unicode normalisation (UAX #15) over the generated
// tables. The common case (ASCII, or text that is already NFC) is copied without decoding.
#include "unicode.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "unicode_tables.h"

namespace radiance::text::unicode {
namespace {

// Hangul syllables compose and decompose algorithmically (Unicode 3.12).
constexpr char32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr char32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount, kSCount = kLCount * kNCount;

struct Scan {
    size_t length;  // bytes that belong to the sequence (0: invalid lead byte)
    bool complete;
};

// Where a UTF-8 sequence starting at s[0] ends, with the Unicode "maximal subpart" rule.
Scan scan_sequence(std::string_view s) {
    auto b0 = static_cast<unsigned char>(s[0]);
    if (b0 < 0x80) return {1, true};
    size_t total;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        total = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        total = 3;
        if (b0 == 0xE0) lo = 0xA0;
        if (b0 == 0xED) hi = 0x9F;  // no surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        total = 4;
        if (b0 == 0xF0) lo = 0x90;
        if (b0 == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    } else {
        return {0, false};
    }
    if (s.size() < 2) return {1, false};
    auto b1 = static_cast<unsigned char>(s[1]);
    if (b1 < lo || b1 > hi) return {1, false};
    size_t k = 2;
    while (k < total && k < s.size()) {
        auto b = static_cast<unsigned char>(s[k]);
        if (b < 0x80 || b > 0xBF) break;
        ++k;
    }
    return {k, k == total};
}

template <class T>
const T* find_cp(const T* table, size_t size, char32_t cp) {
    const T* end = table + size;
    const T* it = std::lower_bound(table, end, cp, [](const T& e, char32_t c) { return e.cp < c; });
    return it != end && it->cp == cp ? it : nullptr;
}

bool in_ranges(const tables::Range* table, size_t size, char32_t cp) {
    const tables::Range* end = table + size;
    const tables::Range* it = std::upper_bound(table, end, cp, [](char32_t c, const tables::Range& r) { return c < r.lo; });
    return it != table && cp <= (it - 1)->hi;
}

uint8_t combining_class(char32_t cp) {
    if (cp < 0x300) return 0;
    const tables::CccRange* end = tables::ccc_ranges + tables::ccc_ranges_size;
    const tables::CccRange* it =
        std::upper_bound(tables::ccc_ranges, end, cp, [](char32_t c, const tables::CccRange& r) { return c < r.lo; });
    if (it == tables::ccc_ranges) return 0;
    --it;
    return cp <= it->hi ? it->ccc : 0;
}

bool nfc_unstable(char32_t cp) { return cp >= 0x300 && in_ranges(tables::nfc_unstable, tables::nfc_unstable_size, cp); }

void decompose(char32_t cp, bool compat, std::u32string& out) {
    if (cp >= kSBase && cp < kSBase + kSCount) {
        char32_t s = cp - kSBase;
        out.push_back(kLBase + s / kNCount);
        out.push_back(kVBase + (s % kNCount) / kTCount);
        if (s % kTCount != 0) out.push_back(kTBase + s % kTCount);
        return;
    }
    if (cp >= 0xA0) {  // nothing below U+00A0 decomposes
        if (const auto* d = find_cp(tables::decompositions, tables::decompositions_size, cp)) {
            size_t off = compat ? d->nfkd_off : d->nfd_off;
            size_t len = compat ? d->nfkd_len : d->nfd_len;
            if (compat && len == 0) {  // no compatibility-only mapping: the canonical one applies
                off = d->nfd_off;
                len = d->nfd_len;
            }
            if (len != 0) {
                out.append(tables::decomp_pool + off, tables::decomp_pool + off + len);
                return;
            }
        }
    }
    out.push_back(cp);
}

char32_t compose_pair(char32_t a, char32_t b) {
    if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
        return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
    if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase && b < kTBase + kTCount) return a + (b - kTBase);
    uint64_t key = (uint64_t{a} << 21) | b;
    const tables::Composition* end = tables::compositions + tables::compositions_size;
    const tables::Composition* it =
        std::lower_bound(tables::compositions, end, key, [](const tables::Composition& c, uint64_t k) { return c.key < k; });
    return it != end && it->key == key ? it->composite : 0;
}

// Canonical ordering: stable sort of each run of non-starters by combining class.
void reorder(std::u32string& buf) {
    for (size_t i = 1; i < buf.size(); ++i) {
        uint8_t c = combining_class(buf[i]);
        if (c == 0) continue;
        size_t j = i;
        while (j > 0) {
            uint8_t p = combining_class(buf[j - 1]);
            if (p == 0 || p <= c) break;
            std::swap(buf[j], buf[j - 1]);
            --j;
        }
    }
}

// Canonical composition (UAX #15, the reference algorithm).
void compose(std::u32string& buf) {
    if (buf.empty()) return;
    size_t starter = 0;
    char32_t starter_ch = buf[0];
    int last_class = combining_class(starter_ch);
    if (last_class != 0) last_class = 256;  // a leading non-starter blocks everything after it
    size_t out = 1;
    for (size_t i = 1; i < buf.size(); ++i) {
        char32_t ch = buf[i];
        int ch_class = combining_class(ch);
        char32_t composite = compose_pair(starter_ch, ch);
        if (composite != 0 && (last_class < ch_class || last_class == 0)) {
            buf[starter] = composite;
            starter_ch = composite;
            continue;
        }
        if (ch_class == 0) {
            starter = out;
            starter_ch = ch;
        }
        last_class = ch_class;
        buf[out++] = ch;
    }
    buf.resize(out);
}

void normalize_full(std::string_view s, Form form, std::string& out) {
    bool compat = form == Form::NFKC || form == Form::NFKD;
    std::u32string buf;
    buf.reserve(s.size());
    for (size_t i = 0; i < s.size();) decompose(next_code_point(s, i), compat, buf);
    reorder(buf);
    if (form == Form::NFC || form == Form::NFKC) compose(buf);
    for (char32_t c : buf) append_utf8(out, c);
}

// Length of the ASCII prefix of s, 8 bytes at a time.
size_t ascii_prefix(std::string_view s, size_t from = 0) {
    size_t i = from;
    for (; i + 8 <= s.size(); i += 8) {
        uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        if (w & 0x8080808080808080ULL) break;
    }
    while (i < s.size() && static_cast<unsigned char>(s[i]) < 0x80) ++i;
    return i;
}

bool is_ascii(std::string_view s) { return ascii_prefix(s) == s.size(); }

// NFC that only decodes what might change: the text is cut before every code point that
// can neither change nor combine with what precedes it, and only pieces holding some
// other code point are normalised.
std::string nfc(std::string_view s) {
    std::string out;
    size_t copied = 0;   // s[0, copied) is already in out
    size_t segment = 0;  // start of the piece that began with the last stable code point
    bool dirty = false;  // that piece holds a code point that may change
    for (size_t i = 0; i < s.size();) {
        auto lead = static_cast<unsigned char>(s[i]);
        if (lead < 0x80 && !dirty) {  // ASCII is stable: skip a run of it at once
            i = ascii_prefix(s, i);
            segment = i - 1;
            continue;
        }
        size_t at = i;
        bool stable;
        if (lead < 0xCC) {  // below U+0300: always stable
            i += sequence_length(lead);
            stable = true;
        } else {
            stable = !nfc_unstable(next_code_point(s, i));
        }
        if (!stable) {
            dirty = true;
            continue;
        }
        if (dirty) {
            out.append(s.substr(copied, segment - copied));
            normalize_full(s.substr(segment, at - segment), Form::NFC, out);
            copied = at;
            dirty = false;
        }
        segment = at;
    }
    if (dirty) {
        out.append(s.substr(copied, segment - copied));
        normalize_full(s.substr(segment), Form::NFC, out);
        copied = s.size();
    }
    if (copied == 0) return std::string(s);
    out.append(s.substr(copied));
    return out;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
    for (size_t i = ascii_prefix(s); i < s.size();) {
        if (static_cast<unsigned char>(s[i]) < 0x80) {
            i = ascii_prefix(s, i);
            continue;
        }
        Scan r = scan_sequence(s.substr(i));
        if (!r.complete) return false;
        i += r.length;
    }
    return true;
}

void append_lossy(std::string& out, std::string_view bytes) {
    size_t run = 0;  // start of the pending run of valid bytes
    size_t i = 0;
    while (i < bytes.size()) {
        if (static_cast<unsigned char>(bytes[i]) < 0x80) {
            ++i;
            continue;
        }
        Scan r = scan_sequence(bytes.substr(i));
        if (r.complete) {
            i += r.length;
            continue;
        }
        out.append(bytes.substr(run, i - run));
        append_utf8(out, kReplacementChar);
        i += r.length == 0 ? 1 : r.length;
        run = i;
    }
    out.append(bytes.substr(run));
}

std::string normalize(std::string_view s, Form form) {
    if (is_ascii(s)) return std::string(s);
    if (form == Form::NFC) return nfc(s);
    std::string out;
    out.reserve(s.size());
    normalize_full(s, form, out);
    return out;
}

std::string lowercase(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        auto b = static_cast<unsigned char>(s[i]);
        if (b < 0x80) {
            out.push_back(static_cast<char>(b >= 'A' && b <= 'Z' ? b + 32 : b));
            ++i;
            continue;
        }
        char32_t cp = next_code_point(s, i);
        if (const auto* m = find_cp(tables::lowercase, tables::lowercase_size, cp)) {
            append_utf8(out, m->lower[0]);
            if (m->lower[1] != 0) append_utf8(out, m->lower[1]);
        } else {
            append_utf8(out, cp);
        }
    }
    return out;
}

std::string strip_combining_marks(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        size_t at = i;
        char32_t cp = next_code_point(s, i);
        if (!is_combining_mark(cp)) out.append(s.substr(at, i - at));
    }
    return out;
}

bool is_whitespace(char32_t c) {
    if (c <= 0x20) return c == 0x20 || (c >= 0x09 && c <= 0x0D);
    if (c < 0x85) return false;
    return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

bool is_numeric(char32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    return in_ranges(tables::numeric, tables::numeric_size, c);
}

bool is_combining_mark(char32_t c) { return c >= 0x300 && in_ranges(tables::combining_marks, tables::combining_marks_size, c); }

}  // namespace radiance::text::unicode
