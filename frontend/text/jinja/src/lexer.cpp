#include "lexer.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "radiance/jinja/error.h"
#include "unicode.h"

namespace radiance::jinja::detail {

namespace {

[[noreturn]] void fail(const std::string& msg, int line) { throw Error(Error::Kind::Syntax, msg, line); }

bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_ascii_digit(c); }

int count_newlines(std::string_view s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Jinja splits on \r\n, \r and \n, joins with \n, and (without keep_trailing_newline)
// drops one final newline.
std::string normalize_newlines(std::string_view src, bool keep_trailing_newline) {
    std::string out;
    out.reserve(src.size());
    for (size_t i = 0; i < src.size(); ++i) {
        if (src[i] == '\r') {
            out.push_back('\n');
            if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
        } else {
            out.push_back(src[i]);
        }
    }
    if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

// Length of the Python-whitespace run (regex \s*) starting at pos.
size_t whitespace_run(std::string_view s, size_t pos) {
    size_t p = pos;
    while (p < s.size()) {
        size_t next = p;
        if (!is_py_space(next_code_point(s, next))) break;
        p = next;
    }
    return p - pos;
}

std::string rstrip_whitespace(std::string_view s) {
    std::u32string cps = to_u32(s);
    size_t end = cps.size();
    while (end > 0 && is_py_space(cps[end - 1])) --end;
    return to_utf8(std::u32string_view(cps).substr(0, end));
}

// Length of a digit run allowing single underscores between digits: (\d+_)*\d+
size_t digits_with_underscores(std::string_view s, size_t pos) {
    size_t p = pos;
    if (p >= s.size() || !is_ascii_digit(s[p])) return 0;
    while (p < s.size()) {
        if (is_ascii_digit(s[p])) {
            ++p;
        } else if (s[p] == '_' && p + 1 < s.size() && is_ascii_digit(s[p + 1])) {
            ++p;
        } else {
            break;
        }
    }
    return p - pos;
}

std::string without_underscores(std::string_view s) {
    std::string out;
    for (char c : s)
        if (c != '_') out.push_back(c);
    return out;
}

// Jinja's float_re: digits, then a fraction and/or an exponent; not after a '.'.
size_t match_float(std::string_view s, size_t pos) {
    if (pos > 0 && s[pos - 1] == '.') return 0;
    size_t p = pos + digits_with_underscores(s, pos);
    if (p == pos) return 0;
    bool fraction = false;
    if (p < s.size() && s[p] == '.') {
        const size_t n = digits_with_underscores(s, p + 1);
        if (n > 0) {
            fraction = true;
            p += 1 + n;
        }
    }
    if (p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
        size_t q = p + 1;
        if (q < s.size() && (s[q] == '+' || s[q] == '-')) ++q;
        const size_t n = digits_with_underscores(s, q);
        if (n > 0) return q + n - pos;
    }
    return fraction ? p - pos : 0;
}

// Jinja's integer_re: 0b/0o/0x prefixed, decimal without leading zeros, or zeros.
size_t match_integer(std::string_view s, size_t pos, int& base) {
    auto prefixed = [&](char lower, auto is_digit) -> size_t {
        if (pos + 2 > s.size() || s[pos] != '0' || (s[pos + 1] | 0x20) != lower) return 0;
        size_t p = pos + 2;
        size_t digits = 0;
        while (p < s.size()) {
            if (s[p] == '_' && p + 1 < s.size() && is_digit(s[p + 1])) {
                p += 2;
            } else if (is_digit(s[p])) {
                ++p;
            } else {
                break;
            }
            ++digits;
        }
        return digits ? p - pos : 0;
    };
    auto bin = [](char c) { return c == '0' || c == '1'; };
    auto oct = [](char c) { return c >= '0' && c <= '7'; };
    auto hex = [](char c) { return is_ascii_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); };
    if (size_t n = prefixed('b', bin)) return base = 2, n;
    if (size_t n = prefixed('o', oct)) return base = 8, n;
    if (size_t n = prefixed('x', hex)) return base = 16, n;
    base = 10;
    if (pos >= s.size() || !is_ascii_digit(s[pos])) return 0;
    if (s[pos] != '0') return digits_with_underscores(s, pos);
    size_t p = pos + 1;  // 0(_?0)*
    while (p < s.size()) {
        if (s[p] == '0') {
            ++p;
        } else if (s[p] == '_' && p + 1 < s.size() && s[p + 1] == '0') {
            p += 2;
        } else {
            break;
        }
    }
    return p - pos;
}

int hex_value(char32_t c) {
    if (c >= '0' && c <= '9') return static_cast<int>(c - '0');
    if (c >= 'a' && c <= 'f') return static_cast<int>(c - 'a' + 10);
    if (c >= 'A' && c <= 'F') return static_cast<int>(c - 'A' + 10);
    return -1;
}

// Jinja unescapes literals with .encode("ascii", "backslashreplace").decode("unicode-escape"),
// i.e. Python's unicode-escape codec.
std::string unescape_string(std::string_view body, int line) {
    const std::u32string cps = to_u32(body);
    std::u32string out;
    for (size_t i = 0; i < cps.size(); ++i) {
        const char32_t c = cps[i];
        if (c != '\\' || i + 1 >= cps.size()) {
            out.push_back(c);
            continue;
        }
        const char32_t n = cps[++i];
        auto read_hex = [&](int count, const char* what) {
            char32_t v = 0;
            for (int k = 0; k < count; ++k) {
                const int h = i + 1 < cps.size() ? hex_value(cps[i + 1]) : -1;
                if (h < 0) fail(std::string("truncated ") + what + " escape", line);
                v = v * 16 + static_cast<char32_t>(h);
                ++i;
            }
            return v;
        };
        switch (n) {
        case '\n': break;  // line continuation
        case '\\':
        case '\'':
        case '"': out.push_back(n); break;
        case 'a': out.push_back(7); break;
        case 'b': out.push_back(8); break;
        case 'f': out.push_back(12); break;
        case 'n': out.push_back(10); break;
        case 'r': out.push_back(13); break;
        case 't': out.push_back(9); break;
        case 'v': out.push_back(11); break;
        case 'x': out.push_back(read_hex(2, "\\xXX")); break;
        case 'u': out.push_back(read_hex(4, "\\uXXXX")); break;
        case 'U': {
            const char32_t v = read_hex(8, "\\UXXXXXXXX");
            if (v > 0x10FFFF) fail("illegal Unicode character", line);
            out.push_back(v);
            break;
        }
        case 'N': fail("\\N{...} escapes are not supported", line);
        default:
            if (n >= '0' && n <= '7') {
                char32_t v = n - '0';
                for (int k = 0; k < 2 && i + 1 < cps.size() && cps[i + 1] >= '0' && cps[i + 1] <= '7'; ++k) v = v * 8 + (cps[++i] - '0');
                out.push_back(v);
            } else if (n >= 0x80) {
                // backslashreplace turned the character into \xNN/\uNNNN text first, and the
                // preceding backslash then escaped that backslash: the result is literal text.
                char buf[16];
                std::snprintf(buf, sizeof buf, n < 0x100 ? "\\x%02x" : n < 0x10000 ? "\\u%04x" : "\\U%08x", static_cast<unsigned>(n));
                for (const char* p = buf; *p; ++p) out.push_back(static_cast<unsigned char>(*p));
            } else {
                out.push_back('\\');  // unknown escapes stay as written
                out.push_back(n);
            }
        }
    }
    // Join UTF-16 surrogate pairs written as two \u escapes into one code point.
    std::u32string joined;
    for (size_t i = 0; i < out.size(); ++i) {
        if (out[i] >= 0xD800 && out[i] <= 0xDBFF && i + 1 < out.size() && out[i + 1] >= 0xDC00 && out[i + 1] <= 0xDFFF) {
            joined.push_back(0x10000 + ((out[i] - 0xD800) << 10) + (out[i + 1] - 0xDC00));
            ++i;
        } else {
            joined.push_back(out[i]);
        }
    }
    return to_utf8(joined);
}

constexpr std::array<std::string_view, 26> kOperators = {"**", "//", "==", "!=", ">=", "<=", "+", "-", "/", "*", "%", "~", "[",
                                                         "]",  "(",  ")",  "{",  "}",  "=",  ">", "<", ".", ":", "|", ",", ";"};

class Lexer {
public:
    Lexer(std::string source, const LexerOptions& opts) : src_(std::move(source)), opts_(opts) {}

    std::vector<Token> run() {
        while (pos_ < src_.size()) lex_root();
        push(TokenType::Eof, "");
        return std::move(tokens_);
    }

private:
    enum class TagKind { Variable, Block, Comment, Raw };

    void push(TokenType type, std::string text, int line = -1) {
        Token t;
        t.type = type;
        t.text = std::move(text);
        t.line = line < 0 ? line_ : line;
        tokens_.push_back(std::move(t));
    }

    bool starts_with(size_t pos, std::string_view s) const { return pos <= src_.size() && src_.compare(pos, s.size(), s) == 0; }

    // Matches {%[-+]?\s*raw\s*(-%}\s*|%}) at pos; returns the match length or 0.
    size_t match_raw_begin(size_t pos) const {
        size_t p = pos + 2;
        if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) ++p;
        p += whitespace_run(src_, p);
        if (!starts_with(p, "raw")) return 0;
        p += 3;
        p += whitespace_run(src_, p);
        if (starts_with(p, "-%}")) return p + 3 + whitespace_run(src_, p + 3) - pos;
        if (starts_with(p, "%}")) return p + 2 - pos;
        return 0;
    }

    // Applies "{%-" stripping or lstrip_blocks to the text before a tag, as Jinja does.
    std::string strip_text(std::string text, char sign, bool is_variable) const {
        if (sign == '-') return rstrip_whitespace(text);
        if (sign == '+' || !opts_.lstrip_blocks || is_variable) return text;
        const size_t nl = text.rfind('\n');
        const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
        if (l_pos == 0 && !line_starting_) return text;
        const std::string_view tail = std::string_view(text).substr(l_pos);
        if (!tail.empty() && whitespace_run(tail, 0) == tail.size()) text.resize(l_pos);
        return text;
    }

    void lex_root() {
        // Find the next {{, {% or {#.
        size_t p = pos_;
        TagKind kind = TagKind::Variable;
        size_t raw_len = 0;
        for (;; ++p) {
            p = src_.find('{', p);
            if (p == std::string::npos || p + 1 >= src_.size()) {
                p = std::string::npos;
                break;
            }
            const char c = src_[p + 1];
            if (c == '{') {
                kind = TagKind::Variable;
                break;
            }
            if (c == '#') {
                kind = TagKind::Comment;
                break;
            }
            if (c == '%') {
                raw_len = match_raw_begin(p);
                kind = raw_len ? TagKind::Raw : TagKind::Block;
                break;
            }
        }
        if (p == std::string::npos) {
            push(TokenType::Data, src_.substr(pos_));
            line_ += count_newlines(std::string_view(src_).substr(pos_));
            pos_ = src_.size();
            return;
        }
        const char sign = (p + 2 < src_.size() && (src_[p + 2] == '-' || src_[p + 2] == '+')) ? src_[p + 2] : 0;
        std::string text = strip_text(src_.substr(pos_, p - pos_), sign, kind == TagKind::Variable);
        if (!text.empty()) push(TokenType::Data, std::move(text));
        line_ += count_newlines(std::string_view(src_).substr(pos_, p - pos_));
        pos_ = p;
        const size_t delim_end = p + 2 + (sign ? 1 : 0);
        switch (kind) {
        case TagKind::Comment: lex_comment(delim_end); break;
        case TagKind::Raw: lex_raw(p + raw_len); break;
        case TagKind::Variable:
            push(TokenType::VariableBegin, "{{");
            finish_match(delim_end);
            lex_tag(false);
            break;
        case TagKind::Block:
            push(TokenType::BlockBegin, "{%");
            finish_match(delim_end);
            lex_tag(true);
            break;
        }
    }

    void lex_comment(size_t start) {
        if (start >= src_.size()) {  // "{#" at the very end: Jinja's lexer just stops
            finish_match(src_.size());
            return;
        }
        for (size_t r = start; r + 1 < src_.size(); ++r) {
            size_t end = 0;
            if (starts_with(r, "+#}")) {
                end = r + 3;
            } else if (starts_with(r, "-#}")) {
                end = r + 3 + whitespace_run(src_, r + 3);
            } else if (starts_with(r, "#}")) {
                end = r + 2;
                if (opts_.trim_blocks && end < src_.size() && src_[end] == '\n') ++end;
            }
            if (end) {
                finish_match(end);
                return;
            }
        }
        fail("Missing end of comment tag", line_);
    }

    // Matches {%[-+]?\s*endraw\s*(+%}|-%}\s*|%}\n?) at pos; returns the end offset or 0.
    size_t match_endraw(size_t pos, char& sign) const {
        if (!starts_with(pos, "{%")) return 0;
        size_t p = pos + 2;
        sign = 0;
        if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
        p += whitespace_run(src_, p);
        if (!starts_with(p, "endraw")) return 0;
        p += 6;
        p += whitespace_run(src_, p);
        if (starts_with(p, "+%}")) return p + 3;
        if (starts_with(p, "-%}")) return p + 3 + whitespace_run(src_, p + 3);
        if (starts_with(p, "%}")) return p + 2 + ((opts_.trim_blocks && p + 2 < src_.size() && src_[p + 2] == '\n') ? 1 : 0);
        return 0;
    }

    void lex_raw(size_t body_start) {
        finish_match(body_start);
        if (body_start >= src_.size()) return;  // like "{#" at the end: no error in Jinja
        for (size_t r = body_start; r < src_.size(); ++r) {
            char sign = 0;
            if (src_[r] != '{') continue;
            if (const size_t end = match_endraw(r, sign)) {
                std::string text = strip_text(src_.substr(body_start, r - body_start), sign, false);
                if (!text.empty()) push(TokenType::Data, std::move(text));
                line_ += count_newlines(std::string_view(src_).substr(body_start, r - body_start));
                finish_match(end);
                return;
            }
        }
        fail("Missing end of raw directive", line_);
    }

    // Moves past a match ending at `end`, counting its newlines; Jinja's "line_starting"
    // is true when the last match ended with a newline.
    void finish_match(size_t end) {
        line_ += count_newlines(std::string_view(src_).substr(pos_, end - pos_));
        line_starting_ = end > pos_ && src_[end - 1] == '\n';
        pos_ = end;
    }

    // Matches the end of the current tag at pos_; returns its end offset or 0.
    size_t match_tag_end(bool block) const {
        if (block) {
            if (starts_with(pos_, "+%}")) return pos_ + 3;
            if (starts_with(pos_, "-%}")) return pos_ + 3 + whitespace_run(src_, pos_ + 3);
            if (starts_with(pos_, "%}"))
                return pos_ + 2 + ((opts_.trim_blocks && pos_ + 2 < src_.size() && src_[pos_ + 2] == '\n') ? 1 : 0);
            return 0;
        }
        if (starts_with(pos_, "-}}")) return pos_ + 3 + whitespace_run(src_, pos_ + 3);
        if (starts_with(pos_, "}}")) return pos_ + 2;
        return 0;
    }

    void lex_tag(bool block) {
        std::vector<char> balance;
        while (pos_ < src_.size()) {
            if (balance.empty()) {
                if (const size_t end = match_tag_end(block)) {
                    push(block ? TokenType::BlockEnd : TokenType::VariableEnd, block ? "%}" : "}}");
                    finish_match(end);
                    return;
                }
            }
            if (const size_t ws = whitespace_run(src_, pos_)) {
                finish_match(pos_ + ws);
                continue;
            }
            lex_tag_token(balance);
        }
        // End of input inside a tag: the parser reports the missing end.
    }

    void lex_tag_token(std::vector<char>& balance) {
        const char c = src_[pos_];
        if (const size_t n = match_float(src_, pos_)) {
            Token t;
            t.type = TokenType::Float;
            t.text = src_.substr(pos_, n);
            t.float_value = std::strtod(without_underscores(t.text).c_str(), nullptr);
            t.line = line_;
            tokens_.push_back(std::move(t));
            pos_ += n;
            return;
        }
        int base = 10;
        if (const size_t n = match_integer(src_, pos_, base)) {
            Token t;
            t.type = TokenType::Integer;
            t.text = src_.substr(pos_, n);
            std::string digits = without_underscores(t.text);
            if (base != 10) digits = digits.substr(2);
            errno = 0;
            char* endp = nullptr;
            t.int_value = static_cast<int64_t>(std::strtoll(digits.c_str(), &endp, base));
            if (errno == ERANGE) fail("integer literal " + t.text + " does not fit in 64 bits", line_);
            t.line = line_;
            tokens_.push_back(std::move(t));
            pos_ += n;
            return;
        }
        if (is_name_start(c)) {
            size_t p = pos_;
            while (p < src_.size() && is_name_char(src_[p])) ++p;
            push(TokenType::Name, src_.substr(pos_, p - pos_));
            pos_ = p;
            return;
        }
        if (c == '\'' || c == '"') {
            size_t p = pos_ + 1;
            while (p < src_.size() && src_[p] != c) p += (src_[p] == '\\') ? 2 : 1;
            if (p < src_.size()) {
                const int start_line = line_;
                std::string body = src_.substr(pos_ + 1, p - pos_ - 1);
                push(TokenType::String, unescape_string(body, start_line), start_line);
                finish_match(p + 1);
                return;
            }
        }
        for (std::string_view op : kOperators) {
            if (!starts_with(pos_, op)) continue;
            if (op == "{" || op == "(" || op == "[") {
                balance.push_back(op == "{" ? '}' : op == "(" ? ')' : ']');
            } else if (op == "}" || op == ")" || op == "]") {
                if (balance.empty()) fail("unexpected '" + std::string(op) + "'", line_);
                const char expected = balance.back();
                balance.pop_back();
                if (expected != op[0]) fail("unexpected '" + std::string(op) + "', expected '" + expected + "'", line_);
            }
            push(TokenType::Operator, std::string(op));
            pos_ += op.size();
            return;
        }
        size_t next = pos_;
        std::string ch;
        append_utf8(ch, next_code_point(src_, next));
        fail("unexpected char '" + ch + "' at " + std::to_string(pos_), line_);
    }

    std::string src_;
    LexerOptions opts_;
    size_t pos_ = 0;
    int line_ = 1;
    bool line_starting_ = true;
    std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const LexerOptions& opts) {
    return Lexer(normalize_newlines(source, opts.keep_trailing_newline), opts).run();
}

std::string describe_token(const Token& t) {
    switch (t.type) {
    case TokenType::Data: return "template data";
    case TokenType::VariableBegin: return "begin of print statement";
    case TokenType::VariableEnd: return "end of print statement";
    case TokenType::BlockBegin: return "begin of statement block";
    case TokenType::BlockEnd: return "end of statement block";
    case TokenType::Eof: return "end of template";
    case TokenType::String: return "string";
    case TokenType::Integer: return "integer";
    case TokenType::Float: return "float";
    case TokenType::Name:
    case TokenType::Operator: return t.text;
    }
    return t.text;
}

}  // namespace radiance::jinja::detail
