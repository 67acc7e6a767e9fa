#include "json_pieces.h"

namespace radiance::grammar {

int JsonPieces::ws() {
    if (ws_ < 0) ws_ = g_.optional(g_.literal(" "));
    return ws_;
}

int JsonPieces::string_char() {
    if (char_ < 0) {
        const int plain = g_.chars({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}, true);
        const int hex = g_.chars({{'0', '9'}, {'A', 'F'}, {'a', 'f'}});
        const int escaped = g_.sequence(
            {g_.literal("\\"),
             g_.choice({g_.chars({{'"', '"'}, {'\\', '\\'}, {'/', '/'}, {'b', 'b'}, {'f', 'f'}, {'n', 'n'}, {'r', 'r'}, {'t', 't'}}),
                        g_.sequence({g_.literal("u"), g_.repeat(hex, 4, 4)})})});
        char_ = g_.choice({plain, escaped});
    }
    return char_;
}

int JsonPieces::string() {
    if (string_ < 0) string_ = g_.sequence({g_.literal("\""), g_.star(string_char()), g_.literal("\"")});
    return string_;
}

int JsonPieces::integer() {
    if (integer_ < 0) {
        const int digits =
            g_.choice({g_.literal("0"), g_.sequence({g_.chars({{'1', '9'}}), g_.repeat(g_.chars({{'0', '9'}}), 0, kMaxDigits - 1)})});
        integer_ = g_.sequence({g_.optional(g_.literal("-")), digits});
    }
    return integer_;
}

int JsonPieces::number() {
    if (number_ < 0) {
        const int digit = g_.chars({{'0', '9'}});
        const int fraction = g_.sequence({g_.literal("."), g_.repeat(digit, 1, kMaxDigits)});
        const int exponent =
            g_.sequence({g_.chars({{'E', 'E'}, {'e', 'e'}}), g_.optional(g_.chars({{'+', '+'}, {'-', '-'}})), g_.repeat(digit, 1, 3)});
        number_ = g_.sequence({integer(), g_.optional(fraction), g_.optional(exponent)});
    }
    return number_;
}

int JsonPieces::list(const char* open, int item, int min, int max, const char* close) {
    const int sep = g_.sequence({ws(), g_.literal(","), ws()});
    const int more = g_.repeat(g_.sequence({sep, item}), min > 0 ? min - 1 : 0, max == kUnbounded ? kUnbounded : max - 1);
    const int some = g_.sequence({item, more, ws()});
    const int body = max == 0 ? g_.empty() : min > 0 ? some : g_.optional(some);
    return g_.sequence({g_.literal(open), ws(), body, g_.literal(close)});
}

void JsonPieces::recursive_rules() {
    if (value_rule_ >= 0) return;
    value_rule_ = g_.rule("json-value");
    object_rule_ = g_.rule("json-object");
    array_rule_ = g_.rule("json-array");
    const int v = g_.ref(value_rule_);
    g_.define(value_rule_, g_.choice({g_.ref(object_rule_), g_.ref(array_rule_), string(), number(), g_.literal("true"),
                                      g_.literal("false"), g_.literal("null")}));
    const int member = g_.sequence({string(), ws(), g_.literal(":"), ws(), v});
    g_.define(object_rule_, list("{", member, 0, kUnbounded, "}"));
    g_.define(array_rule_, list("[", v, 0, kUnbounded, "]"));
}

int JsonPieces::value() {
    recursive_rules();
    return g_.ref(value_rule_);
}

int JsonPieces::object() {
    recursive_rules();
    return g_.ref(object_rule_);
}

int JsonPieces::array() {
    recursive_rules();
    return g_.ref(array_rule_);
}

}  // namespace radiance::grammar
