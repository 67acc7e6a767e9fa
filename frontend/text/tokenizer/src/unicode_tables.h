// unicode_tables.h: the Unicode data the tokenizer needs, as compact sorted arrays.
// The arrays are defined in unicode_tables.cpp, which gen_unicode_tables.py writes from
// Python's unicodedata (regenerate, never edit by hand). Lookups live in unicode.cpp.
#pragma once
#include <cstddef>
#include <cstdint>

namespace radiance::text::tables {

struct Range {  // inclusive code point range
    uint32_t lo, hi;
};
struct CccRange {  // canonical combining class of every code point in [lo, hi]
    uint32_t lo, hi;
    uint8_t ccc;
};
// Full (recursive) decompositions, Hangul syllables excluded (they are algorithmic).
// nfd_* is the canonical one, nfkd_* the compatibility one; both index into decomp_pool.
// A length of 0 means "maps to itself" for that form.
struct Decomposition {
    uint32_t cp;
    uint16_t nfd_off;
    uint8_t nfd_len;
    uint16_t nfkd_off;
    uint8_t nfkd_len;
};
struct Composition {  // primary composite: (first << 21 | second) -> composite
    uint64_t key;
    uint32_t composite;
};
struct CaseMapping {  // full lowercase mapping of one code point (1 or 2 code points)
    uint32_t cp;
    uint32_t lower[2];
};

extern const char* const unicode_version;
extern const CccRange ccc_ranges[];
extern const size_t ccc_ranges_size;
extern const Decomposition decompositions[];
extern const size_t decompositions_size;
extern const uint32_t decomp_pool[];
extern const Composition compositions[];
extern const size_t compositions_size;
// Code points after which NFC cannot be decided locally: everything except starters that are
// already NFC and can never combine with a preceding character. Below U+0300 nothing is listed.
extern const Range nfc_unstable[];
extern const size_t nfc_unstable_size;
extern const CaseMapping lowercase[];
extern const size_t lowercase_size;
extern const Range numeric[];  // general category N* (Rust char::is_numeric)
extern const size_t numeric_size;
extern const Range combining_marks[];  // general category M* (StripAccents)
extern const size_t combining_marks_size;

// Characters the UCD used by the generator assigns after regex_base_version (the Unicode
// version of PCRE2's own tables), with their general category; sorted by category.
struct CategoryRange {
    char category[3];
    uint32_t lo, hi;
};
extern const char* const regex_base_version;
extern const CategoryRange regex_new_characters[];
extern const size_t regex_new_characters_size;

}  // namespace radiance::text::tables
