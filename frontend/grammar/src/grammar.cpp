#include "radiance/grammar/grammar.h"

#include <algorithm>
#include <unordered_set>

namespace radiance::grammar {

std::vector<CodeRange> normalise(std::vector<CodeRange> r) {
    for (auto& c : r) {
        c.hi = std::min(c.hi, kMaxCodePoint);
        if (c.lo > c.hi) c.lo = c.hi + 1;  // empty: dropped below
    }
    r.erase(std::remove_if(r.begin(), r.end(), [](const CodeRange& c) { return c.lo > c.hi; }), r.end());
    std::sort(r.begin(), r.end(), [](const CodeRange& a, const CodeRange& b) { return a.lo < b.lo; });
    std::vector<CodeRange> out;
    for (const auto& c : r) {
        if (!out.empty() && c.lo <= out.back().hi + 1)
            out.back().hi = std::max(out.back().hi, c.hi);
        else
            out.push_back(c);
    }
    return out;
}

std::vector<CodeRange> complement(const std::vector<CodeRange>& ranges) {
    std::vector<CodeRange> out;
    uint32_t next = 0;
    for (const auto& c : normalise(ranges)) {
        if (c.lo > next) out.push_back({next, c.lo - 1});
        next = c.hi + 1;
    }
    if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
    return out;
}

int Grammar::add(Expr e) {
    exprs.push_back(std::move(e));
    return static_cast<int>(exprs.size()) - 1;
}

int Grammar::empty() { return add({}); }

int Grammar::literal(std::string_view utf8) {
    if (utf8.empty()) return empty();
    Expr e;
    e.kind = ExprKind::Literal;
    e.text = std::string(utf8);
    return add(std::move(e));
}

int Grammar::chars(std::vector<CodeRange> ranges, bool negate) {
    Expr e;
    e.kind = ExprKind::CharSet;
    e.ranges = negate ? complement(ranges) : normalise(std::move(ranges));
    return add(std::move(e));
}

int Grammar::sequence(std::vector<int> items) {
    if (items.empty()) return empty();
    if (items.size() == 1) return items[0];
    Expr e;
    e.kind = ExprKind::Sequence;
    e.items = std::move(items);
    return add(std::move(e));
}

int Grammar::choice(std::vector<int> items) {
    if (items.empty()) return nothing();
    if (items.size() == 1) return items[0];
    Expr e;
    e.kind = ExprKind::Choice;
    e.items = std::move(items);
    return add(std::move(e));
}

int Grammar::repeat(int item, int min, int max) {
    if (min == 1 && max == 1) return item;
    Expr e;
    e.kind = ExprKind::Repeat;
    e.item = item;
    e.min = min;
    e.max = max;
    return add(std::move(e));
}

int Grammar::ref(int rule) {
    Expr e;
    e.kind = ExprKind::RuleRef;
    e.item = rule;
    return add(std::move(e));
}

int Grammar::rule(const std::string& name) {
    if (int r = find_rule(name); r >= 0) return r;
    rules.push_back({name, -1});
    return static_cast<int>(rules.size()) - 1;
}

int Grammar::find_rule(std::string_view name) const {
    for (size_t i = 0; i < rules.size(); ++i)
        if (rules[i].name == name) return static_cast<int>(i);
    return -1;
}

int Grammar::helper(const std::string& base, int body) {
    std::string name = base;
    for (int k = 1; find_rule(name) >= 0; ++k) name = base + "-" + std::to_string(k);
    const int r = rule(name);
    define(r, body);
    return r;
}

namespace {

void put_char(std::string& out, uint32_t c, bool in_class) {
    auto hex = [&](uint32_t v, int digits) {
        static const char* k = "0123456789ABCDEF";
        for (int i = digits - 1; i >= 0; --i) out += k[(v >> (4 * i)) & 15];
    };
    if (c == '\n') return void(out += "\\n");
    if (c == '\t') return void(out += "\\t");
    if (c == '\r') return void(out += "\\r");
    if (c == '\\' || (in_class ? (c == ']' || c == '-' || c == '^') : c == '"')) {
        out += '\\';
        out += static_cast<char>(c);
        return;
    }
    if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0)) return void((out += "\\x", hex(c, 2)));
    if (c < 0x80) return void(out += static_cast<char>(c));
    if (c <= 0xFFFF) return void((out += "\\u", hex(c, 4)));
    out += "\\U";
    hex(c, 8);
}

void put_expr(const Grammar& g, int id, std::string& out, int depth) {
    const Expr& e = g.exprs[static_cast<size_t>(id)];
    switch (e.kind) {
    case ExprKind::Empty: out += "\"\""; break;
    case ExprKind::Literal: {
        out += '"';
        for (size_t i = 0; i < e.text.size();) {  // the text is valid UTF-8 (sources check it)
            unsigned char b = static_cast<unsigned char>(e.text[i]);
            uint32_t c = b;
            int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
            if (n > 1) c = b & (0x3F >> (n - 1));
            for (int k = 1; k < n && i + static_cast<size_t>(k) < e.text.size(); ++k) c = (c << 6) | (e.text[i + k] & 0x3F);
            put_char(out, c, false);
            i += static_cast<size_t>(n);
        }
        out += '"';
        break;
    }
    case ExprKind::CharSet:
        out += '[';
        for (const auto& r : e.ranges) {
            put_char(out, r.lo, true);
            if (r.hi != r.lo) {
                out += '-';
                put_char(out, r.hi, true);
            }
        }
        if (e.ranges.empty()) out += "^\\x00-\\U0010FFFF";
        out += ']';
        break;
    case ExprKind::Sequence:
    case ExprKind::Choice:
        if (depth > 0) out += "(";
        for (size_t i = 0; i < e.items.size(); ++i) {
            if (i) out += e.kind == ExprKind::Choice ? " | " : " ";
            put_expr(g, e.items[i], out, depth + 1);
        }
        if (depth > 0) out += ")";
        break;
    case ExprKind::Repeat:
        put_expr(g, e.item, out, depth + 1);
        if (e.min == 0 && e.max == 1)
            out += '?';
        else if (e.min == 0 && e.max == kUnbounded)
            out += '*';
        else if (e.min == 1 && e.max == kUnbounded)
            out += '+';
        else
            out += "{" + std::to_string(e.min) + (e.max == e.min ? "" : "," + (e.max == kUnbounded ? "" : std::to_string(e.max))) + "}";
        break;
    case ExprKind::RuleRef: out += g.rules[static_cast<size_t>(e.item)].name; break;
    }
}

}  // namespace

std::string to_gbnf(const Grammar& g) {
    std::string out;
    for (const auto& r : g.rules) {
        out += r.name + " ::= ";
        if (r.body >= 0) put_expr(g, r.body, out, 0);
        out += '\n';
    }
    return out;
}

}  // namespace radiance::grammar
