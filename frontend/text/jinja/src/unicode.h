// UTF-8 and code-point helpers. Python strings are sequences of code points, so
// len(), indexing, slicing, strip() and case changes work on code points, not bytes.
// Invalid UTF-8 bytes decode to U+DC80..U+DCFF (Python's "surrogateescape") and
// encode back to the same byte, so any byte string survives a round trip.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace radiance::jinja::detail {

// Decodes the code point starting at s[pos] and advances pos past it.
char32_t next_code_point(std::string_view s, size_t& pos);
void append_utf8(std::string& out, char32_t cp);

std::u32string to_u32(std::string_view s);
std::string to_utf8(std::u32string_view s);
size_t code_point_count(std::string_view s);

// Python str.isspace() for one code point.
bool is_py_space(char32_t c);
// Approximations of Python's Unicode database: ASCII, Latin-1, Latin Extended-A,
// Greek and Cyrillic have case mappings; everything else is caseless.
char32_t to_upper_cp(char32_t c);
char32_t to_lower_cp(char32_t c);
bool is_cased(char32_t c);
bool is_alpha_cp(char32_t c);
bool is_digit_cp(char32_t c);
// Python's "printable" notion, used by repr(): false for controls, separators and format characters.
bool is_printable_cp(char32_t c);
// Python's \w (regex word character).
bool is_word_cp(char32_t c);

std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);
// str.capitalize(): first character title-cased, the rest lower-cased.
std::string py_capitalize(std::string_view s);
// str.title(): title-case every character that follows an uncased one.
std::string py_title(std::string_view s);
// Strips code points for which is_strip_char returns true; chars=nullptr means whitespace.
std::string py_strip(std::string_view s, const std::u32string* chars, bool left, bool right);
// str.splitlines(): splits on \n, \r, \r\n, \v, \f, \x1c-\x1e, \x85, \u2028, \u2029.
std::vector<std::string> py_splitlines(std::string_view s, bool keepends);

}  // namespace radiance::jinja::detail
