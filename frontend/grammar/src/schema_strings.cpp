#include "schema_strings.h"

#include <algorithm>
#include <map>

#include "json_pieces.h"
#include "radiance/grammar/sources.h"
#include "utf8_ranges.h"

namespace radiance::grammar {

namespace {

// A character of a string's value as JSON text writes it.
std::string json_escaped(uint32_t c) {
    switch (c) {
    case '"': return "\\\"";
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    case '\b': return "\\b";
    case '\f': return "\\f";
    default: break;
    }
    if (c < 0x20) {
        static const char* k = "0123456789abcdef";
        return std::string("\\u00") + k[c >> 4] + k[c & 15];
    }
    std::string s;
    append_utf8(s, c);
    return s;
}

// Expression `id` (over a string's value) rewritten over its JSON text.
class Escaper {
public:
    explicit Escaper(Grammar& g) : g_(g) {}
    int run(int id, int depth = 0) {
        if (depth > 1000) throw GrammarError("the pattern nests too deeply");
        if (auto it = done_.find(id); it != done_.end()) return it->second;
        const Expr e = g_.exprs[static_cast<size_t>(id)];  // a copy: the pool grows below
        int out = id;
        switch (e.kind) {
        case ExprKind::Empty:
        case ExprKind::RuleRef: break;
        case ExprKind::Literal: {
            std::string text;
            for (size_t i = 0; i < e.text.size();) text += json_escaped(static_cast<uint32_t>(next_code_point(e.text, i)));
            out = g_.literal(text);
            break;
        }
        case ExprKind::CharSet: {
            std::vector<CodeRange> plain;
            std::vector<int> alts;
            for (const auto& r : e.ranges) {
                for (uint32_t c = r.lo; c <= r.hi && c < 0x20; ++c) alts.push_back(g_.literal(json_escaped(c)));
                for (uint32_t c : {uint32_t{'"'}, uint32_t{'\\'}})
                    if (r.lo <= c && c <= r.hi) alts.push_back(g_.literal(json_escaped(c)));
                plain.push_back(r);
            }
            alts.push_back(g_.chars(normalise_without_escapes(plain)));
            out = g_.choice(std::move(alts));
            break;
        }
        case ExprKind::Sequence:
        case ExprKind::Choice: {
            std::vector<int> items;
            for (int i : e.items) items.push_back(run(i, depth + 1));
            out = e.kind == ExprKind::Sequence ? g_.sequence(std::move(items)) : g_.choice(std::move(items));
            break;
        }
        case ExprKind::Repeat: out = g_.repeat(run(e.item, depth + 1), e.min, e.max); break;
        }
        done_[id] = out;
        return out;
    }

private:
    static std::vector<CodeRange> normalise_without_escapes(const std::vector<CodeRange>& r) {
        const auto bad = normalise({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}});
        std::vector<CodeRange> keep = complement(bad), out;
        for (const auto& a : normalise(r))
            for (const auto& b : keep) {
                const uint32_t lo = std::max(a.lo, b.lo), hi = std::min(a.hi, b.hi);
                if (lo <= hi) out.push_back({lo, hi});
            }
        return normalise(out);
    }
    Grammar& g_;
    std::map<int, int> done_;
};

std::string digits_of(int64_t v) { return std::to_string(v); }

// Decimal strings of one length n from x to y (x <= y, both n digits).
int same_length(Grammar& g, const std::string& x, const std::string& y) {
    const size_t n = x.size();
    const int digit = g.chars({{'0', '9'}});
    if (n == 1) return g.chars({{static_cast<uint32_t>(x[0]), static_cast<uint32_t>(y[0])}});
    const std::string xr = x.substr(1), yr = y.substr(1);
    if (x[0] == y[0]) return g.sequence({g.literal(x.substr(0, 1)), same_length(g, xr, yr)});
    if (xr == std::string(n - 1, '0') && yr == std::string(n - 1, '9'))
        return g.sequence({g.chars({{static_cast<uint32_t>(x[0]), static_cast<uint32_t>(y[0])}}),
                           g.repeat(digit, static_cast<int>(n - 1), static_cast<int>(n - 1))});
    std::vector<int> alts{g.sequence({g.literal(x.substr(0, 1)), same_length(g, xr, std::string(n - 1, '9'))})};
    if (y[0] - x[0] > 1)
        alts.push_back(g.sequence({g.chars({{static_cast<uint32_t>(x[0] + 1), static_cast<uint32_t>(y[0] - 1)}}),
                                   g.repeat(digit, static_cast<int>(n - 1), static_cast<int>(n - 1))}));
    alts.push_back(g.sequence({g.literal(y.substr(0, 1)), same_length(g, std::string(n - 1, '0'), yr)}));
    return g.choice(std::move(alts));
}

int64_t pow10(size_t n) {
    int64_t p = 1;
    while (n--) p *= 10;
    return p;
}

// Non-negative integers a..b (b < 0: unbounded), no leading zeros, at most kMaxDigits digits.
int nonnegative(Grammar& g, int64_t a, int64_t b) {
    const size_t max_len = JsonPieces::kMaxDigits;
    std::vector<int> alts;
    const size_t la = digits_of(a).size();
    const size_t lb = b < 0 ? max_len : digits_of(b).size();
    for (size_t len = la; len <= lb; ++len) {
        const int64_t lo = std::max<int64_t>(a, len == 1 ? 0 : pow10(len - 1));
        const int64_t hi = (b < 0 || len < lb) ? pow10(len) - 1 : b;
        if (lo > hi) continue;
        if (b < 0 && len > la && len < max_len) {  // every longer length: one expression
            alts.push_back(g.sequence(
                {g.chars({{'1', '9'}}), g.repeat(g.chars({{'0', '9'}}), static_cast<int>(len - 1), static_cast<int>(max_len - 1))}));
            break;
        }
        alts.push_back(same_length(g, digits_of(lo), digits_of(hi)));
    }
    return g.choice(std::move(alts));
}

}  // namespace

int json_string_from_pattern(Grammar& g, const std::string& pattern) {
    const int value = regex_expr(g, pattern);
    return g.sequence({g.literal("\""), Escaper(g).run(value), g.literal("\"")});
}

int json_string_from_format(Grammar& g, const std::string& format) {
    static const std::string date = R"(\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01]))";
    static const std::string time = R"(([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,9})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d))";
    static const std::string octet = R"((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))";
    static const std::string label = R"([A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)";
    static const std::map<std::string, std::string> formats = {
        {"date", date},
        {"time", time},
        {"date-time", date + "T" + time},
        {"uuid", R"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"},
        {"email", R"([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)"},
        {"ipv4", "(" + octet + R"(\.){3})" + octet},
        {"hostname", label + R"((\.)" + label + ")*"},
        {"uri", R"([A-Za-z][A-Za-z0-9+.-]*:[^\s"\\]+)"},
    };
    auto it = formats.find(format);
    if (it == formats.end()) return -1;
    return json_string_from_pattern(g, it->second);
}

int integer_range(Grammar& g, std::optional<int64_t> lo, std::optional<int64_t> hi) {
    std::vector<int> alts;
    if (!lo || *lo < 0) {  // negatives: "-" and the magnitudes in [-min(hi, -1), -lo]
        const int64_t mag_lo = -(hi ? std::min<int64_t>(*hi, -1) : -1);
        const int64_t mag_hi = lo ? -*lo : -1;
        if (mag_hi < 0 || mag_lo <= mag_hi) alts.push_back(g.sequence({g.literal("-"), nonnegative(g, mag_lo, mag_hi)}));
    }
    if (!hi || *hi >= 0) alts.push_back(nonnegative(g, lo ? std::max<int64_t>(*lo, 0) : 0, hi ? *hi : -1));
    return g.choice(std::move(alts));
}

}  // namespace radiance::grammar
