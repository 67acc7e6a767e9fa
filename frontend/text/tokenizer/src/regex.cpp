// regex.cpp: the PCRE2 wrapper. Match data and the JIT stack are per thread so one compiled
// Regex serves all threads without locks.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "regex.h"

#include <pcre2.h>

#include <cstdio>

#include "radiance/text/tokenizer.h"
#include "unicode.h"
#include "unicode_tables.h"

namespace radiance::text {
namespace {

// Oniguruma's \s in UTF-8 mode is the White_Space property. PCRE2 with UCP also counts
// U+180E (a format character since Unicode 6.3), so spell the class out.
constexpr std::string_view kSpaceBody =
    "\\t-\\r\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}"
    "\\x{3000}";
// Oniguruma's \w; PCRE2 10.42's UCP \w is only \p{L}\p{N}_.
constexpr std::string_view kWordBody = "\\p{L}\\p{M}\\p{Nd}\\p{Pc}";

std::string error_text(int code) {
    PCRE2_UCHAR buf[256];
    pcre2_get_error_message(code, buf, sizeof(buf));
    return reinterpret_cast<const char*>(buf);
}

// Class-body ranges of the characters assigned after PCRE2's Unicode version whose general
// category is `name` ("L" takes Lu, Ll, ...; "Lo" only Lo). Empty for other property names.
std::string new_characters(std::string_view name) {
    std::string body;
    if (name.empty() || name.size() > 2) return body;
    for (size_t i = 0; i < tables::regex_new_characters_size; ++i) {
        const tables::CategoryRange& r = tables::regex_new_characters[i];
        if (std::string_view(r.category).substr(0, name.size()) != name) continue;
        char buf[48];
        std::snprintf(buf, sizeof(buf), "\\x{%X}-\\x{%X}", r.lo, r.hi);
        body += buf;
    }
    return body;
}

// At p[i] == '\\' followed by 'p' or 'P': rewrites a general-category property so that it
// also covers characters newer than PCRE2's tables. Returns the number of pattern bytes
// consumed, or 0 to copy them unchanged.
size_t rewrite_property(std::string_view p, size_t i, bool in_class, std::string& out) {
    bool negated = p[i + 1] == 'P';
    std::string_view name;
    size_t end;
    if (i + 2 < p.size() && p[i + 2] == '{') {
        size_t close = p.find('}', i + 3);
        if (close == std::string_view::npos) return 0;
        name = p.substr(i + 3, close - i - 3);
        end = close + 1;
    } else if (i + 2 < p.size()) {
        name = p.substr(i + 2, 1);
        end = i + 3;
    } else {
        return 0;
    }
    if (!name.empty() && name[0] == '^') {
        negated = !negated;
        name.remove_prefix(1);
    }
    std::string extra = new_characters(name);
    if (extra.empty() || (in_class && negated)) return 0;
    std::string property = "\\p{" + std::string(name) + "}";
    if (in_class)
        out += property + extra;
    else
        out += (negated ? "[^" : "[") + property + extra + "]";
    return end - i;
}

struct ThreadMatchState {
    pcre2_match_data* data = nullptr;
    pcre2_match_context* context = nullptr;
    pcre2_jit_stack* jit_stack = nullptr;
    ThreadMatchState() {
        data = pcre2_match_data_create(16, nullptr);
        context = pcre2_match_context_create(nullptr);
        jit_stack = pcre2_jit_stack_create(32 * 1024, 4 * 1024 * 1024, nullptr);
        if (context && jit_stack) pcre2_jit_stack_assign(context, nullptr, jit_stack);
    }
    ~ThreadMatchState() {
        pcre2_jit_stack_free(jit_stack);
        pcre2_match_context_free(context);
        pcre2_match_data_free(data);
    }
};

ThreadMatchState& thread_state() {
    thread_local ThreadMatchState state;
    return state;
}

}  // namespace

std::string onig_pattern_to_pcre2(std::string_view p) {
    std::string out;
    out.reserve(p.size() + 64);
    bool in_class = false;
    for (size_t i = 0; i < p.size(); ++i) {
        char c = p[i];
        if (c == '\\' && i + 1 < p.size()) {
            char d = p[i + 1];
            if (d == 'p' || d == 'P') {
                if (size_t used = rewrite_property(p, i, in_class, out)) {
                    i += used - 1;
                    continue;
                }
            }
            std::string_view body = (d == 's' || d == 'S') ? kSpaceBody : (d == 'w' || d == 'W') ? kWordBody : std::string_view{};
            bool negated = d == 'S' || d == 'W';
            if (!body.empty() && !(in_class && negated)) {
                if (in_class) {
                    out.append(body);
                } else {
                    out.append(negated ? "[^" : "[").append(body).append("]");
                }
            } else if (d == 'Q') {  // \Q...\E is literal: copy it untouched
                size_t e = p.find("\\E", i + 2);
                size_t stop = e == std::string_view::npos ? p.size() : e + 2;
                out.append(p.substr(i, stop - i));
                i = stop - 1;
                continue;
            } else {
                out.push_back(c);
                out.push_back(d);
            }
            ++i;
            continue;
        }
        if (!in_class && c == '[') {
            in_class = true;
            out.push_back(c);
            if (i + 1 < p.size() && p[i + 1] == '^') out.push_back(p[++i]);
            if (i + 1 < p.size() && p[i + 1] == ']') out.push_back(p[++i]);  // literal ']'
            continue;
        }
        if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {  // [:alpha:]
            size_t e = p.find(":]", i + 2);
            size_t stop = e == std::string_view::npos ? i + 1 : e + 2;
            out.append(p.substr(i, stop - i));
            i = stop - 1;
            continue;
        }
        if (in_class && c == ']') in_class = false;
        out.push_back(c);
    }
    return out;
}

Regex::Regex(std::string_view pattern, bool literal) : source_(pattern) {
    std::string compiled = literal ? std::string(pattern) : onig_pattern_to_pcre2(pattern);
    // PCRE2_LITERAL does not combine with UCP (which only matters for classes anyway).
    uint32_t options = PCRE2_UTF | PCRE2_NO_UTF_CHECK | (literal ? PCRE2_LITERAL : PCRE2_UCP);
    int err = 0;
    PCRE2_SIZE err_offset = 0;
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(compiled.data()), compiled.size(), options, &err, &err_offset, nullptr);
    if (!code)
        throw TokenizerError("cannot compile regex '" + source_ + "' at offset " + std::to_string(err_offset) + ": " + error_text(err));
    code_ = code;
    jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

bool Regex::search(std::string_view text, Match* m) const {
    auto* code = static_cast<pcre2_code*>(code_);
    ThreadMatchState& st = thread_state();
    auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), 0, 0, st.data, st.context)
                  : pcre2_match(code, subject, text.size(), 0, PCRE2_NO_UTF_CHECK, st.data, st.context);
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
        rc = pcre2_match(code, subject, text.size(), 0, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, st.data, st.context);
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc < 0) throw TokenizerError("regex '" + source_ + "' failed: " + error_text(rc));
    if (m) {
        PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
        *m = {ov[0], ov[1]};
    }
    return true;
}

void Regex::find_all(std::string_view text, std::vector<Match>& out) const {
    auto* code = static_cast<pcre2_code*>(code_);
    ThreadMatchState& st = thread_state();
    auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t last_end = 0;
    bool have_last = false;
    size_t last_match_end = 0;
    while (last_end <= text.size()) {
        int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), last_end, 0, st.data, st.context)
                      : pcre2_match(code, subject, text.size(), last_end, PCRE2_NO_UTF_CHECK, st.data, st.context);
        if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
            rc = pcre2_match(code, subject, text.size(), last_end, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, st.data, st.context);
        if (rc == PCRE2_ERROR_NOMATCH) break;
        if (rc < 0) throw TokenizerError("regex '" + source_ + "' failed: " + error_text(rc));
        PCRE2_SIZE* ov = pcre2_get_ovector_pointer(st.data);
        size_t s = ov[0], e = ov[1];
        if (s == e && have_last && last_match_end == e) {
            // Oniguruma: no empty match right after the previous one; step one character.
            last_end += last_end < text.size() ? unicode::sequence_length(static_cast<unsigned char>(text[last_end])) : 1;
            continue;
        }
        last_end = e;
        last_match_end = e;
        have_last = true;
        out.push_back({s, e});
    }
}

}  // namespace radiance::text
