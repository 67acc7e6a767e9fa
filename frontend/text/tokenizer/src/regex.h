// regex.h: PCRE2 (UTF + UCP, JIT-compiled) standing in for the Oniguruma regexes that the
// `tokenizers` library uses for Split/Replace patterns.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace radiance::text {

struct Match {
    size_t start, end;
};

class Regex {
public:
    // literal: the pattern is a plain string (tokenizer.json {"String": ...} patterns).
    Regex(std::string_view pattern, bool literal);
    ~Regex();
    Regex(const Regex&) = delete;
    Regex& operator=(const Regex&) = delete;

    // All matches, left to right, with Oniguruma's find_iter rules (an empty match right where
    // the previous match ended is skipped). text must be valid UTF-8.
    void find_all(std::string_view text, std::vector<Match>& out) const;
    bool search(std::string_view text, Match* m = nullptr) const;

    const std::string& pattern() const { return source_; }

private:
    std::string source_;
    void* code_ = nullptr;  // pcre2_code_8*
    bool jit_ = false;
};

// The body of a character class for \w as Rust's regex crate reads it (Unicode word
// characters per UTS #18), which the library uses for single_word added tokens and the
// Whitespace pre-tokenizer. Unlike Oniguruma's \w it has letter numbers (Ⅻ) and circled
// letters (Ⓐ).
inline constexpr std::string_view kRustWordClass = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\p{Join_Control}";

// Rewrites Oniguruma-isms that PCRE2 reads differently: \s and \w get Oniguruma's Unicode
// meaning (White_Space; Letter|Mark|Decimal_Number|Connector_Punctuation), and general
// categories (\p{L}, \p{N}, \pL, \P{Lu}, ...) also take the characters newer than PCRE2's
// Unicode tables (see gen_unicode_tables.py). Exposed for tests.
std::string onig_pattern_to_pcre2(std::string_view pattern);

}  // namespace radiance::text
