// regex.cpp: a regular expression (the Python / ECMAScript syntax clients send to vLLM's `regex`
// and in JSON Schema's `pattern`) into grammar expressions, matched against the whole text.
// Lazy and possessive quantifiers match the same strings as greedy ones, so they are accepted;
// what no automaton can do (backreferences, lookaround, word boundaries) is refused by name.
#include <cctype>

#include "radiance/grammar/sources.h"
#include "utf8_ranges.h"

namespace radiance::grammar {

namespace {

constexpr int kMaxRepeat = 10000;
constexpr int kMaxNesting = 200;

const std::vector<CodeRange> kDigit{{'0', '9'}};
const std::vector<CodeRange> kWord{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const std::vector<CodeRange> kSpace{{'\t', '\r'}, {' ', ' '}};

class RegexParser {
public:
    RegexParser(Grammar& g, std::string_view p) : g_(g), s_(p) {}

    int parse() {
        if (i_ < s_.size() && s_[i_] == '^') ++i_;
        const int e = alternatives(0);
        if (i_ < s_.size()) fail(s_[i_] == ')' ? "unbalanced ')'" : std::string("unexpected '") + s_[i_] + "'");
        return e;
    }

private:
    [[noreturn]] void fail_at(size_t at, const std::string& what) const { throw GrammarError(what, "offset " + std::to_string(at)); }
    [[noreturn]] void fail(const std::string& what) const { fail_at(i_, what); }
    bool at_end() const { return i_ >= s_.size(); }
    // A `$` that ends the pattern (or the branch before `|` or `)`).
    bool anchor_end() const {
        if (at_end() || s_[i_] != '$') return false;
        return i_ + 1 == s_.size() || s_[i_ + 1] == '|' || s_[i_ + 1] == ')';
    }

    int alternatives(int depth) {
        if (depth > kMaxNesting) fail("groups nest too deeply");
        std::vector<int> alts{sequence(depth)};
        while (!at_end() && s_[i_] == '|') {
            ++i_;
            alts.push_back(sequence(depth));
        }
        return g_.choice(std::move(alts));
    }

    int sequence(int depth) {
        std::vector<int> items;
        while (!at_end() && s_[i_] != '|' && s_[i_] != ')') {
            if (anchor_end()) {
                ++i_;
                continue;
            }
            items.push_back(quantified(atom(depth)));
        }
        return g_.sequence(std::move(items));
    }

    int number() {
        const size_t b = i_;
        long v = 0;
        while (!at_end() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
            v = v * 10 + (s_[i_] - '0');
            if (v > kMaxRepeat) fail("a repetition count above " + std::to_string(kMaxRepeat));
            ++i_;
        }
        if (b == i_) fail("expected a number");
        return static_cast<int>(v);
    }

    // `{` starts a counted repetition only as {m}, {m,} or {m,n}; otherwise it is a literal brace.
    bool counted_ahead() const {
        size_t k = i_ + 1;
        const size_t d0 = k;
        while (k < s_.size() && std::isdigit(static_cast<unsigned char>(s_[k]))) ++k;
        if (k == d0) return false;
        if (k < s_.size() && s_[k] == ',') {
            ++k;
            while (k < s_.size() && std::isdigit(static_cast<unsigned char>(s_[k]))) ++k;
        }
        return k < s_.size() && s_[k] == '}';
    }

    int quantified(int item) {
        for (;;) {
            if (at_end()) return item;
            const char c = s_[i_];
            int lo, hi;
            if (c == '*') {
                lo = 0, hi = kUnbounded, ++i_;
            } else if (c == '+') {
                lo = 1, hi = kUnbounded, ++i_;
            } else if (c == '?') {
                lo = 0, hi = 1, ++i_;
            } else if (c == '{' && counted_ahead()) {
                const size_t at = i_;
                ++i_;
                lo = hi = number();
                if (s_[i_] == ',') {
                    ++i_;
                    hi = s_[i_] == '}' ? kUnbounded : number();
                }
                ++i_;  // '}'
                if (hi != kUnbounded && hi < lo) fail_at(at, "a repetition's upper bound is below its lower bound");
            } else {
                return item;
            }
            if (!at_end() && (s_[i_] == '?' || s_[i_] == '+')) ++i_;  // lazy or possessive: the same strings
            item = g_.repeat(item, lo, hi);
        }
    }

    uint32_t hex(int digits) {
        uint32_t v = 0;
        for (int k = 0; k < digits; ++k) {
            if (at_end() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) fail("expected " + std::to_string(digits) + " hex digits");
            const char c = s_[i_++];
            v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10));
        }
        return v;
    }

    uint32_t checked(uint32_t c, size_t at) const {
        if (c > kMaxCodePoint || (c >= 0xD800 && c <= 0xDFFF)) fail_at(at, "not a Unicode character");
        return c;
    }

    // After a backslash: a class escape into `set` (true), or one character into `c` (false).
    bool escape(std::vector<CodeRange>& set, uint32_t& c, bool in_class) {
        const size_t at = i_ - 1;
        if (at_end()) fail("a pattern cannot end with '\\'");
        const char e = s_[i_++];
        switch (e) {
        case 'd': set = kDigit; return true;
        case 'D': set = complement(kDigit); return true;
        case 'w': set = kWord; return true;
        case 'W': set = complement(kWord); return true;
        case 's': set = kSpace; return true;
        case 'S': set = complement(kSpace); return true;
        case 'n': c = '\n'; return false;
        case 't': c = '\t'; return false;
        case 'r': c = '\r'; return false;
        case 'f': c = '\f'; return false;
        case 'v': c = '\v'; return false;
        case '0': c = 0; return false;
        case 'x': c = checked(hex(2), at); return false;
        case 'u':
            if (!at_end() && s_[i_] == '{') {
                ++i_;
                uint32_t v = 0;
                int n = 0;
                while (!at_end() && std::isxdigit(static_cast<unsigned char>(s_[i_])) && n < 8) v = v * 16 + hex(1), ++n;
                if (at_end() || s_[i_] != '}' || n == 0) fail("expected \\u{hex}");
                ++i_;
                c = checked(v, at);
            } else {
                c = checked(hex(4), at);
            }
            return false;
        case 'U': c = checked(hex(8), at); return false;
        case 'b':
            if (in_class) {
                c = '\b';
                return false;
            }
            fail_at(at, "word boundaries (\\b) are not supported");
        case 'B': fail_at(at, "word boundaries (\\B) are not supported");
        case 'A':
        case 'Z':
        case 'z': fail_at(at, "anchors other than ^ and $ at the ends are not supported");
        default:
            if (std::isdigit(static_cast<unsigned char>(e)) || e == 'k') fail_at(at, "backreferences are not supported");
            if (std::isalnum(static_cast<unsigned char>(e))) fail_at(at, std::string("unknown escape '\\") + e + "'");
            c = static_cast<unsigned char>(e);
            return false;
        }
    }

    uint32_t plain_char() {
        const size_t at = i_;
        const int32_t c = next_code_point(s_, i_);
        if (c < 0) fail_at(at, "invalid UTF-8");
        return static_cast<uint32_t>(c);
    }

    int atom(int depth) {
        const size_t at = i_;
        const char c = s_[i_];
        switch (c) {
        case '(': {
            ++i_;
            if (!at_end() && s_[i_] == '?') {
                ++i_;
                if (!at_end() && s_[i_] == ':') {
                    ++i_;
                } else if (!at_end() && (s_[i_] == 'P' || (s_[i_] == '<' && s_.substr(i_, 2) != "<=" && s_.substr(i_, 2) != "<!"))) {
                    if (s_[i_] == 'P') ++i_;
                    if (at_end() || s_[i_] != '<') fail("expected a group name");
                    while (!at_end() && s_[i_] != '>') ++i_;
                    if (at_end()) fail("unterminated group name");
                    ++i_;
                } else if (!at_end() && (s_[i_] == '=' || s_[i_] == '!' || s_[i_] == '<')) {
                    fail_at(at, "lookaround is not supported");
                } else {
                    fail_at(at, "inline flags and other (?...) groups are not supported");
                }
            }
            const int e = alternatives(depth + 1);
            if (at_end() || s_[i_] != ')') fail_at(at, "unbalanced '('");
            ++i_;
            return e;
        }
        case '[': return char_class();
        case '.': ++i_; return g_.chars({{'\n', '\n'}}, true);
        case '\\': {
            ++i_;
            std::vector<CodeRange> set;
            uint32_t ch = 0;
            if (escape(set, ch, false)) return g_.chars(std::move(set));
            return g_.chars({{ch, ch}});
        }
        case '^': fail("'^' is supported only at the start");
        case '$': fail("'$' is supported only at the end");
        case '*':
        case '+':
        case '?': fail(std::string("nothing to repeat before '") + c + "'");
        default: {
            const uint32_t ch = plain_char();
            return g_.chars({{ch, ch}});
        }
        }
    }

    int char_class() {
        const size_t at = i_;
        ++i_;
        bool negate = false;
        if (!at_end() && s_[i_] == '^') {
            negate = true;
            ++i_;
        }
        std::vector<CodeRange> ranges;
        bool first = true;
        while (!at_end() && (s_[i_] != ']' || first)) {
            first = false;
            if (s_.substr(i_, 2) == "[:") fail("POSIX classes ([:alpha:]) are not supported");
            uint32_t lo;
            if (s_[i_] == '\\') {
                ++i_;
                std::vector<CodeRange> set;
                if (escape(set, lo, true)) {
                    ranges.insert(ranges.end(), set.begin(), set.end());
                    continue;
                }
            } else {
                lo = plain_char();
            }
            uint32_t hi = lo;
            if (i_ + 1 < s_.size() && s_[i_] == '-' && s_[i_ + 1] != ']') {
                ++i_;
                if (s_[i_] == '\\') {
                    ++i_;
                    std::vector<CodeRange> set;
                    if (escape(set, hi, true)) fail("a class escape cannot end a range");
                } else {
                    hi = plain_char();
                }
                if (hi < lo) fail("a character range runs backwards");
            }
            ranges.push_back({lo, hi});
        }
        if (at_end()) fail_at(at, "unterminated character class");
        ++i_;
        return g_.chars(std::move(ranges), negate);
    }

    Grammar& g_;
    std::string_view s_;
    size_t i_ = 0;
};

}  // namespace

int regex_expr(Grammar& g, std::string_view pattern) { return RegexParser(g, pattern).parse(); }

Grammar regex_grammar(std::string_view pattern) {
    Grammar g;
    const int e = regex_expr(g, pattern);
    g.root = g.rule("root");
    g.define(g.root, e);
    return g;
}

Grammar choice_grammar(const std::vector<std::string>& choices) {
    Grammar g;
    std::vector<int> alts;
    for (const auto& c : choices) {
        size_t i = 0;
        while (i < c.size())
            if (next_code_point(c, i) < 0) throw GrammarError("a choice is not valid UTF-8");
        alts.push_back(g.literal(c));
    }
    if (alts.empty()) throw GrammarError("the choice list is empty");
    g.root = g.rule("root");
    g.define(g.root, g.choice(std::move(alts)));
    return g;
}

}  // namespace radiance::grammar
