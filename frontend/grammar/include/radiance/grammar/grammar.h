// grammar.h: the one grammar representation every structured-output source compiles into (JSON
// Schema, JSON object mode, regular expressions, choice lists, GBNF): rules whose bodies are
// expressions over Unicode characters (literals, character sets), sequences, alternatives,
// repetition and references to rules. Plain values, built through Grammar's methods; compile.h
// turns one into a token matcher for a vocabulary.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace radiance::grammar {

// A grammar, schema, pattern or choice list that cannot be compiled. `where` is the place in the
// source the caller shows with the field it came from: "line 3, column 7" for GBNF, "offset 12"
// for a regular expression, a JSON pointer ("/properties/age/minimum") for a schema.
struct GrammarError : std::runtime_error {
    std::string where;
    GrammarError(const std::string& what, std::string at = "") : std::runtime_error(what), where(std::move(at)) {}
};

struct CodeRange {
    uint32_t lo = 0, hi = 0;  // inclusive code points
    friend bool operator==(const CodeRange&, const CodeRange&) = default;
};

inline constexpr uint32_t kMaxCodePoint = 0x10FFFF;
inline constexpr int kUnbounded = -1;

enum class ExprKind : uint8_t {
    Empty,     // matches the empty string
    Literal,   // `text`, UTF-8
    CharSet,   // one character in `ranges` (sorted, disjoint; none: matches nothing)
    Sequence,  // `items` one after another
    Choice,    // one of `items`
    Repeat,    // `item` at least `min` and at most `max` (kUnbounded) times
    RuleRef,   // rule `item`
};

struct Expr {
    ExprKind kind = ExprKind::Empty;
    std::string text;
    std::vector<CodeRange> ranges;
    std::vector<int> items;
    int item = -1;
    int min = 0, max = 0;
};

struct Rule {
    std::string name;
    int body = -1;  // an expression id; -1 until defined
};

// Expressions live in one pool and refer to each other by id, so sources build them bottom up and
// share sub-expressions freely.
class Grammar {
public:
    int empty();
    int literal(std::string_view utf8);
    int chars(std::vector<CodeRange> ranges, bool negate = false);  // normalised: sorted and merged
    int any_char() { return chars({{0, kMaxCodePoint}}); }
    int nothing() { return chars({}); }
    int sequence(std::vector<int> items);
    int choice(std::vector<int> items);
    int repeat(int item, int min, int max);
    int optional(int item) { return repeat(item, 0, 1); }
    int star(int item) { return repeat(item, 0, kUnbounded); }
    int plus(int item) { return repeat(item, 1, kUnbounded); }
    int ref(int rule);

    // A rule named `name` (a new one, or the existing one of that name), its body set later.
    int rule(const std::string& name);
    int find_rule(std::string_view name) const;  // -1 when absent
    void define(int rule, int body) { rules[static_cast<size_t>(rule)].body = body; }
    // A rule of its own with a name not used yet (`base`, `base-1`, ...), defined as `body`.
    int helper(const std::string& base, int body);

    std::vector<Expr> exprs;
    std::vector<Rule> rules;
    int root = -1;  // the rule a match starts from

private:
    int add(Expr e);
};

// The grammar in GBNF, for tests and for showing what a schema became.
std::string to_gbnf(const Grammar& g);

// Code point ranges sorted and merged (overlapping or adjacent ranges joined).
std::vector<CodeRange> normalise(std::vector<CodeRange> ranges);
// The code points [0, kMaxCodePoint] not in `ranges` (normalised).
std::vector<CodeRange> complement(const std::vector<CodeRange>& ranges);

}  // namespace radiance::grammar
