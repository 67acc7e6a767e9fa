// Unicode building blocks: normalisation, UTF-8 repair, and the Oniguruma-compatible regex.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "regex.h"  // internal headers of rad_tokenizer
#include "unicode.h"

namespace {

namespace unicode = radiance::text::unicode;
using radiance::text::Match;
using radiance::text::Regex;

std::vector<std::string> all_matches(const Regex& re, const std::string& text) {
    std::vector<Match> m;
    re.find_all(text, m);
    std::vector<std::string> out;
    for (const Match& x : m) out.push_back(text.substr(x.start, x.end - x.start));
    return out;
}

}  // namespace

TEST_CASE("tokenizer unicode normalisation", "[tokenizer][unicode]") {
    using unicode::Form;
    CHECK(unicode::normalize("e\xCC\x81", Form::NFC) == "\xC3\xA9");  // e + U+0301 -> é
    CHECK(unicode::normalize("\xC3\xA9", Form::NFD) == "e\xCC\x81");
    CHECK(unicode::normalize("\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8", Form::NFC) == "\xEA\xB0\x81");  // jamo -> 각
    CHECK(unicode::normalize("\xEA\xB0\x81", Form::NFD) == "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8");
    CHECK(unicode::normalize("a\xCC\x87\xCC\xA3", Form::NFC) == "\xE1\xBA\xA1\xCC\x87");  // reordered, then ạ + dot
    CHECK(unicode::normalize("\xE2\x84\xA6", Form::NFC) == "\xCE\xA9");                   // ohm sign -> omega
    CHECK(unicode::normalize("\xEF\xAC\x81", Form::NFKC) == "fi");
    CHECK(unicode::normalize("\xEF\xAC\x81", Form::NFC) == "\xEF\xAC\x81");
    CHECK(unicode::normalize("plain ascii", Form::NFKD) == "plain ascii");
    CHECK(unicode::normalize("\xCC\x81"
                             "abc",
                             Form::NFC) ==
          "\xCC\x81"
          "abc");  // leading combining mark stays
    CHECK(unicode::lowercase("\xC4\xB0"
                             "ABC\xCE\xA3") ==
          "i\xCC\x87"
          "abc\xCF\x83");  // İ -> i + dot, Σ -> σ
}

TEST_CASE("tokenizer unicode UTF-8 repair", "[tokenizer][unicode]") {
    auto lossy = [](const std::string& s) {
        std::string out;
        unicode::append_lossy(out, s);
        return out;
    };
    const std::string fffd = "\xEF\xBF\xBD";
    CHECK(lossy("abc") == "abc");
    CHECK(lossy("\x80") == fffd);
    CHECK(lossy("\xE4\xBD") == fffd);                               // one maximal subpart
    CHECK(lossy("\xE0\x80") == fffd + fffd);                        // E0 80 is never valid: two
    CHECK(lossy("\xED\xA0\x80") == fffd + fffd + fffd);             // a surrogate
    CHECK(lossy("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);  // above U+10FFFF
    CHECK(lossy("\xC0\xAF") == fffd + fffd);                        // overlong
    CHECK(unicode::is_valid_utf8("\xF0\x9F\x98\x80 ok"));
    CHECK_FALSE(unicode::is_valid_utf8("ok \xF0\x9F\x98"));
}

TEST_CASE("tokenizer regex follows Oniguruma's classes", "[tokenizer][unicode]") {
    Regex space("\\s+", false);
    // U+0085 and U+3000 are White_Space; U+180E (Mongolian vowel separator) is not any more.
    CHECK(all_matches(space,
                      "a\xC2\x85"
                      "b\xE3\x80\x80"
                      "c\xE1\xA0\x8E"
                      "d") == std::vector<std::string>{"\xC2\x85", "\xE3\x80\x80"});
    Regex not_space("[^\\s\\p{L}]+", false);
    CHECK(all_matches(not_space, "a\xE1\xA0\x8E!") == std::vector<std::string>{"\xE1\xA0\x8E!"});
    Regex word("\\w+", false);
    CHECK(all_matches(word, "e\xCC\x81t\xC3\xA9 x_1") == std::vector<std::string>{"e\xCC\x81t\xC3\xA9", "x_1"});
    Regex contractions("(?i:'s|'t)", false);
    CHECK(all_matches(contractions, "IT'S it's") == std::vector<std::string>{"'S", "'s"});
    // Empty matches right after a match are skipped, like Oniguruma's find_iter.
    Regex maybe("a*", false);
    CHECK(all_matches(maybe, "baa") == std::vector<std::string>{"", "aa"});
    CHECK(radiance::text::onig_pattern_to_pcre2("[\\s]\\S") ==
          "[\\t-\\r\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]"
          "[^\\t-\\r\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]");
    // A CJK extension H ideograph (Unicode 15.0): a letter for Oniguruma, unknown to PCRE2 10.42.
    const std::string ext_h = "\xF0\xB1\x8D\x90";  // U+31350
    CHECK(all_matches(Regex("\\p{L}+", false), "a" + ext_h + "!") == std::vector<std::string>{"a" + ext_h});
    CHECK(all_matches(Regex("[^\\s\\p{L}\\p{N}]+", false), ext_h + "!?") == std::vector<std::string>{"!?"});
    CHECK(all_matches(Regex("\\PL+", false), ext_h + "12") == std::vector<std::string>{"12"});
    Regex literal("a.b", true);
    CHECK(all_matches(literal, "a.b axb") == std::vector<std::string>{"a.b"});
}
