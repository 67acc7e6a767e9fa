#!/usr/bin/env python3
"""Writes src/unicode_tables.cpp: the Unicode data the tokenizer needs (see src/unicode_tables.h).

Run from anywhere:  python3 frontend/text/tokenizer/gen_unicode_tables.py [UCD_DIR]

The data comes from Python's unicodedata. The `tokenizers` library normalises (NFC, NFD, NFKC,
NFKD, StripAccents) with the crate unicode-normalization-alignments 0.1.12, whose tables are
Unicode 9.0: characters added later are unassigned there (combining class 0, no decomposition,
not a mark). To give the same results, the normalisation tables keep only characters of
Unicode 9.0 or older, by their age in DerivedAge.txt of the Unicode Character Database in
UCD_DIR (default /usr/share/unicode; Debian: apt-get install unicode-data). Normalisation data
of an assigned character never changes between versions, so a newer unicodedata restricted
this way is Unicode 9.0's. Lowercase and the numeric class come from Rust's standard library in
`tokenizers`, which follows current Unicode, so they use unicodedata as it is.

The regexes run on PCRE2, whose Unicode tables are those of its release (10.42, Debian 12:
Unicode 14.0), while the library's Oniguruma is newer. The general categories of characters
that UCD_DIR's UnicodeData.txt assigns after Unicode 14.0 are written out too, and the regex
layer adds them to \p{L}, \p{N}, ... (with Debian 12's UCD, 15.0: e.g. CJK extension H).

The tables are small sorted arrays searched with a binary search; only the rare non-ASCII
slow paths ever touch them.
"""
import os
import sys
import unicodedata as ud

NORMALIZATION_VERSION = (9, 0)
DEFAULT_UCD_DIR = "/usr/share/unicode"
PCRE2_UNICODE_VERSION = (14, 0)  # what Debian 12's PCRE2 10.42 was built with


def read_ages(path):
    """Code point -> (major, minor) of the version that assigned it."""
    ages = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#")[0].strip()
            if not line:
                continue
            cps, version = (x.strip() for x in line.split(";"))
            lo, _, hi = cps.partition("..")
            v = tuple(int(x) for x in version.split("."))
            for cp in range(int(lo, 16), int(hi or lo, 16) + 1):
                ages[cp] = v
    return ages


AGES = {}


def in_normalization_version(cp):
    # Unknown age (newer than the file): not in Unicode 9.0 either.
    return AGES.get(cp, (99, 0)) <= NORMALIZATION_VERSION


def ccc(ch):
    return ud.combining(ch) if in_normalization_version(ord(ch)) else 0


def norm(form, ch):
    """Normalisation of one character as Unicode 9.0 had it."""
    return ud.normalize(form, ch) if in_normalization_version(ord(ch)) else ch

MAX_CP = 0x110000
HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3


def chars():
    for cp in range(MAX_CP):
        if 0xD800 <= cp < 0xE000:
            continue
        yield cp, chr(cp)


def ranges(pred):
    out, start, prev = [], None, None
    for cp, ch in chars():
        if pred(cp, ch):
            if start is None:
                start = cp
            elif prev != cp - 1:
                out.append((start, prev))
                start = cp
            prev = cp
    if start is not None:
        out.append((start, prev))
    return out


def ccc_ranges():
    out = []
    for cp, ch in chars():
        c = ccc(ch)
        if c == 0:
            continue
        if out and out[-1][1] == cp - 1 and out[-1][2] == c:
            out[-1] = (out[-1][0], cp, c)
        else:
            out.append((cp, cp, c))
    return out


def decompositions():
    entries, pool, index = [], [], {}

    def intern(s):
        # Reuse identical sequences: many compatibility forms share a decomposition.
        key = tuple(ord(c) for c in s)
        if key not in index:
            index[key] = len(pool)
            pool.extend(key)
        return index[key], len(key)

    for cp, ch in chars():
        if HANGUL_FIRST <= cp <= HANGUL_LAST:
            continue
        d, k = norm("NFD", ch), norm("NFKD", ch)
        if d == ch and k == ch:
            continue
        d_off, d_len = intern(d) if d != ch else (0, 0)
        k_off, k_len = intern(k) if k != ch else (0, 0)
        entries.append((cp, d_off, d_len, k_off, k_len))
    assert len(pool) < 65536 and max(e[2] for e in entries) < 256 and max(e[4] for e in entries) < 256
    return entries, pool


def compositions():
    pairs = []
    for cp, ch in chars():
        if not in_normalization_version(cp):
            continue
        m = ud.decomposition(ch)
        if not m or m.startswith("<"):
            continue
        parts = [int(p, 16) for p in m.split()]
        # A primary composite is a canonical pair that survives NFC (not excluded).
        if len(parts) == 2 and ud.normalize("NFC", ch) == ch:
            pairs.append(((parts[0] << 21) | parts[1], cp))
    pairs.sort()
    return pairs


def nfc_unstable(pairs):
    seconds = {key & 0x1FFFFF for key, _ in pairs}
    # Hangul: vowel and trailing jamo compose with a preceding L or LV syllable.
    seconds.update(range(0x1161, 0x1176))
    seconds.update(range(0x11A8, 0x11C3))

    def unstable(cp, ch):
        if ccc(ch) != 0 or cp in seconds or norm("NFC", ch) != ch:
            return True
        first = norm("NFD", ch)[0]
        return ccc(first) != 0 or ord(first) in seconds

    out = ranges(unstable)
    assert out[0][0] >= 0x300, "the U+0300 fast path in unicode.cpp relies on this"
    return out


def lowercase():
    out = []
    for cp, ch in chars():
        low = ch.lower()  # per code point: no final-sigma context, like Rust char::to_lowercase
        if low != ch:
            assert len(low) <= 2
            cps = [ord(c) for c in low] + [0]
            out.append((cp, cps[0], cps[1]))
    return out


def fmt_rows(items, per_line):
    lines = []
    for i in range(0, len(items), per_line):
        lines.append("    " + " ".join(items[i:i + per_line]))
    return "\n".join(lines)


def read_categories(path):
    """Code point -> general category, from UnicodeData.txt (with its First>/Last> ranges)."""
    cats, first = {}, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split(";")
            cp, name, category = int(fields[0], 16), fields[1], fields[2]
            if name.endswith("First>"):
                first = cp
            elif name.endswith("Last>"):
                for c in range(first, cp + 1):
                    cats[c] = category
            else:
                cats[cp] = category
    return cats


def regex_new_characters(ucd_dir):
    """(category, lo, hi) for characters assigned after PCRE2's Unicode version."""
    cats = read_categories(os.path.join(ucd_dir, "UnicodeData.txt"))
    out = []
    for cp in sorted(cats):
        if AGES.get(cp, (99, 0)) <= PCRE2_UNICODE_VERSION or cats[cp][0] == "C":
            continue
        if out and out[-1][0] == cats[cp] and out[-1][2] == cp - 1:
            out[-1] = (out[-1][0], out[-1][1], cp)
        else:
            out.append((cats[cp], cp, cp))
    return sorted(out)


def main():
    ucd_dir = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_UCD_DIR
    age_path = os.path.join(ucd_dir, "DerivedAge.txt")
    if not os.path.exists(age_path):
        sys.exit("need the UCD in %s (Debian: apt-get install unicode-data) or its folder as argument" % ucd_dir)
    AGES.update(read_ages(age_path))
    new_chars = regex_new_characters(ucd_dir)
    here = os.path.dirname(os.path.abspath(__file__))
    out_path = os.path.join(here, "src", "unicode_tables.cpp")
    ccc = ccc_ranges()
    dec, pool = decompositions()
    comp = compositions()
    unstable = nfc_unstable(comp)
    low = lowercase()
    numeric = ranges(lambda cp, ch: ud.category(ch).startswith("N"))
    marks = ranges(lambda cp, ch: in_normalization_version(cp) and ud.category(ch).startswith("M"))

    def rng(rs):
        return fmt_rows(["{0x%X,0x%X}," % r for r in rs], 6)

    parts = [
        "// Generated by gen_unicode_tables.py from Python's unicodedata %s (normalisation and"
        % ud.unidata_version,
        "// combining marks as of Unicode %d.%d, like the tokenizers library). Do not edit."
        % NORMALIZATION_VERSION,
        "// clang-format off",
        '#include "unicode_tables.h"',
        "",
        "namespace radiance::text::tables {",
        "",
        'const char* const unicode_version = "%s (normalization %d.%d)";'
        % ((ud.unidata_version,) + NORMALIZATION_VERSION),
        "",
        "const CccRange ccc_ranges[] = {",
        fmt_rows(["{0x%X,0x%X,%d}," % r for r in ccc], 5),
        "};",
        "const size_t ccc_ranges_size = sizeof(ccc_ranges) / sizeof(ccc_ranges[0]);",
        "",
        "const Decomposition decompositions[] = {",
        fmt_rows(["{0x%X,%d,%d,%d,%d}," % e for e in dec], 5),
        "};",
        "const size_t decompositions_size = sizeof(decompositions) / sizeof(decompositions[0]);",
        "",
        "const uint32_t decomp_pool[] = {",
        fmt_rows(["0x%X," % c for c in pool], 12),
        "};",
        "",
        "const Composition compositions[] = {",
        fmt_rows(["{0x%XULL,0x%X}," % p for p in comp], 4),
        "};",
        "const size_t compositions_size = sizeof(compositions) / sizeof(compositions[0]);",
        "",
        "const Range nfc_unstable[] = {",
        rng(unstable),
        "};",
        "const size_t nfc_unstable_size = sizeof(nfc_unstable) / sizeof(nfc_unstable[0]);",
        "",
        "const CaseMapping lowercase[] = {",
        fmt_rows(["{0x%X,{0x%X,0x%X}}," % e for e in low], 5),
        "};",
        "const size_t lowercase_size = sizeof(lowercase) / sizeof(lowercase[0]);",
        "",
        "const Range numeric[] = {",
        rng(numeric),
        "};",
        "const size_t numeric_size = sizeof(numeric) / sizeof(numeric[0]);",
        "",
        "const Range combining_marks[] = {",
        rng(marks),
        "};",
        "const size_t combining_marks_size = sizeof(combining_marks) / sizeof(combining_marks[0]);",
        "",
        'const char* const regex_base_version = "%d.%d";' % PCRE2_UNICODE_VERSION,
        "const CategoryRange regex_new_characters[] = {",
        fmt_rows(['{"%s",0x%X,0x%X},' % r for r in new_chars], 4),
        "};",
        "const size_t regex_new_characters_size = sizeof(regex_new_characters) / sizeof(regex_new_characters[0]);",
        "",
        "}  // namespace radiance::text::tables",
        "",
    ]
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
    print("wrote %s (Unicode %s): %d ccc ranges, %d decompositions, pool %d, %d compositions, "
          "%d unstable ranges, %d lowercase, %d numeric, %d marks, %d new-character ranges"
          % (out_path, ud.unidata_version, len(ccc), len(dec), len(pool), len(comp),
             len(unstable), len(low), len(numeric), len(marks), len(new_chars)), file=sys.stderr)


if __name__ == "__main__":
    main()
