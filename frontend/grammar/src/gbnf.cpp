// gbnf.cpp: llama.cpp's GBNF text into a Grammar. A rule is `name ::= alternatives`; at the top
// level a newline ends it (inside parentheses newlines are spaces), except that a line whose
// first character is `|` continues the rule before it.
#include <cctype>

#include "radiance/grammar/sources.h"
#include "utf8_ranges.h"

namespace radiance::grammar {

namespace {

constexpr int kMaxRepeat = 10000;
constexpr int kMaxNesting = 200;

class GbnfParser {
public:
    explicit GbnfParser(std::string_view t) : s_(t) {}

    Grammar parse() {
        skip(true);
        while (i_ < s_.size()) {
            rule_definition();
            skip(true);
        }
        for (size_t r = 0; r < g_.rules.size(); ++r)
            if (g_.rules[r].body < 0) fail_at(first_use_[r], "rule '" + g_.rules[r].name + "' is used but never defined");
        g_.root = g_.find_rule("root");
        if (g_.root < 0) fail_at(0, "the grammar has no 'root' rule");
        return std::move(g_);
    }

private:
    [[noreturn]] void fail_at(size_t at, const std::string& what) const {
        size_t line = 1, col = 1;
        for (size_t k = 0; k < at && k < s_.size(); ++k) {
            if (s_[k] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        throw GrammarError(what, "line " + std::to_string(line) + ", column " + std::to_string(col));
    }
    [[noreturn]] void fail(const std::string& what) const { fail_at(i_, what); }

    static bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_'; }

    // Spaces and comments; newlines too when `newlines`.
    void skip(bool newlines) {
        while (i_ < s_.size()) {
            const char c = s_[i_];
            if (c == '#') {
                while (i_ < s_.size() && s_[i_] != '\n') ++i_;
            } else if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
                ++i_;
            } else {
                break;
            }
        }
    }

    std::string name() {
        const size_t b = i_;
        while (i_ < s_.size() && word_char(s_[i_])) ++i_;
        if (b == i_) fail("expected a rule name");
        return std::string(s_.substr(b, i_ - b));
    }

    int rule_ref(const std::string& n, size_t at) {
        const int r = g_.rule(n);
        if (static_cast<size_t>(r) >= first_use_.size()) first_use_.resize(static_cast<size_t>(r) + 1, at);
        return r;
    }

    void rule_definition() {
        const size_t at = i_;
        const std::string n = name();
        skip(false);
        if (s_.substr(i_, 3) != "::=") fail("expected '::=' after the rule name '" + n + "'");
        i_ += 3;
        const int r = rule_ref(n, at);
        if (g_.rules[static_cast<size_t>(r)].body >= 0) fail_at(at, "rule '" + n + "' is defined twice");
        skip(true);  // the body may start on the next line
        g_.define(r, alternatives(false, 0));
        skip(false);
        if (i_ < s_.size() && s_[i_] != '\n') fail(std::string("unexpected '") + s_[i_] + "'");
    }

    // At the top level, a newline followed by `|` continues the alternatives.
    bool continues_on_next_line() {
        size_t k = i_;
        if (k >= s_.size() || s_[k] != '\n') return false;
        while (k < s_.size() && (s_[k] == '\n' || s_[k] == ' ' || s_[k] == '\t' || s_[k] == '\r')) ++k;
        if (k < s_.size() && s_[k] == '|') {
            i_ = k;
            return true;
        }
        return false;
    }

    int alternatives(bool nested, int depth) {
        if (depth > kMaxNesting) fail("groups nest too deeply");
        std::vector<int> alts{sequence(nested, depth)};
        for (;;) {
            skip(nested);
            if (!nested) continues_on_next_line();
            if (i_ >= s_.size() || s_[i_] != '|') break;
            ++i_;
            skip(nested);
            alts.push_back(sequence(nested, depth));
        }
        return g_.choice(std::move(alts));
    }

    int sequence(bool nested, int depth) {
        std::vector<int> items;
        for (;;) {
            skip(nested);
            if (i_ >= s_.size()) break;
            const char c = s_[i_];
            int item;
            if (c == '"') {
                item = literal();
            } else if (c == '[') {
                item = char_class();
            } else if (c == '.') {
                ++i_;
                item = g_.any_char();
            } else if (c == '(') {
                ++i_;
                skip(true);
                item = alternatives(true, depth + 1);
                skip(true);
                if (i_ >= s_.size() || s_[i_] != ')') fail("expected ')'");
                ++i_;
            } else if (word_char(c)) {
                const size_t at = i_;
                const std::string n = name();
                size_t k = i_;
                while (k < s_.size() && (s_[k] == ' ' || s_[k] == '\t')) ++k;
                if (s_.substr(k, 3) == "::=") {  // the next rule starts: this one ended a line early
                    i_ = at;
                    fail("expected a newline before the next rule '" + n + "'");
                }
                item = g_.ref(rule_ref(n, at));
            } else if (c == '<') {
                fail("token references (<...>) are not supported");
            } else {
                break;
            }
            items.push_back(postfix(item));
        }
        return g_.sequence(std::move(items));
    }

    int number() {
        const size_t b = i_;
        long v = 0;
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) {
            v = v * 10 + (s_[i_] - '0');
            if (v > kMaxRepeat) fail("a repetition count above " + std::to_string(kMaxRepeat));
            ++i_;
        }
        if (b == i_) fail("expected a number");
        return static_cast<int>(v);
    }

    int postfix(int item) {
        for (;;) {
            if (i_ >= s_.size()) return item;
            const char c = s_[i_];
            if (c == '*') {
                ++i_;
                item = g_.star(item);
            } else if (c == '+') {
                ++i_;
                item = g_.plus(item);
            } else if (c == '?') {
                ++i_;
                item = g_.optional(item);
            } else if (c == '{') {
                ++i_;
                skip(false);
                const int lo = number();
                int hi = lo;
                skip(false);
                if (i_ < s_.size() && s_[i_] == ',') {
                    ++i_;
                    skip(false);
                    hi = i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])) ? number() : kUnbounded;
                    skip(false);
                }
                if (i_ >= s_.size() || s_[i_] != '}') fail("expected '}'");
                ++i_;
                if (hi != kUnbounded && hi < lo) fail("a repetition's upper bound is below its lower bound");
                item = g_.repeat(item, lo, hi);
            } else {
                return item;
            }
        }
    }

    uint32_t hex(int digits) {
        uint32_t v = 0;
        for (int k = 0; k < digits; ++k) {
            if (i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_])))
                fail("expected " + std::to_string(digits) + " hex digits");
            const char c = s_[i_++];
            v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10));
        }
        if (v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF)) fail("not a Unicode character");
        return v;
    }

    // One character of a literal or class, escapes decoded.
    uint32_t character() {
        if (i_ >= s_.size()) fail("unexpected end of the grammar");
        if (s_[i_] == '\\') {
            ++i_;
            if (i_ >= s_.size()) fail("unexpected end after '\\'");
            const char e = s_[i_++];
            switch (e) {
            case 'n': return '\n';
            case 't': return '\t';
            case 'r': return '\r';
            case 'x': return hex(2);
            case 'u': return hex(4);
            case 'U': return hex(8);
            default: return static_cast<unsigned char>(e);  // \\ \" \[ \] and any other: itself
            }
        }
        const size_t at = i_;
        const int32_t c = next_code_point(s_, i_);
        if (c < 0) fail_at(at, "invalid UTF-8");
        return static_cast<uint32_t>(c);
    }

    int literal() {
        ++i_;
        std::string text;
        while (i_ < s_.size() && s_[i_] != '"') {
            if (s_[i_] == '\n') fail("a newline inside a literal (write \\n)");
            append_utf8(text, character());
        }
        if (i_ >= s_.size()) fail("unterminated literal");
        ++i_;
        return g_.literal(text);
    }

    int char_class() {
        ++i_;
        bool negate = false;
        if (i_ < s_.size() && s_[i_] == '^') {
            negate = true;
            ++i_;
        }
        std::vector<CodeRange> ranges;
        while (i_ < s_.size() && s_[i_] != ']') {
            if (s_[i_] == '\n') break;  // a class ends on its line
            const uint32_t lo = character();
            uint32_t hi = lo;
            if (i_ + 1 < s_.size() && s_[i_] == '-' && s_[i_ + 1] != ']' && s_[i_ + 1] != '\n') {
                ++i_;
                hi = character();
                if (hi < lo) fail("a character range runs backwards");
            }
            ranges.push_back({lo, hi});
        }
        if (i_ >= s_.size() || s_[i_] != ']') fail("unterminated character class");
        ++i_;
        return g_.chars(std::move(ranges), negate);
    }

    std::string_view s_;
    size_t i_ = 0;
    Grammar g_;
    std::vector<size_t> first_use_;
};

}  // namespace

Grammar gbnf_grammar(std::string_view text) { return GbnfParser(text).parse(); }

}  // namespace radiance::grammar
