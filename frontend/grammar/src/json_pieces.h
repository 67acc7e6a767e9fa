// json_pieces.h: JSON's own grammar (RFC 8259) as rules added to a Grammar, shared by JSON
// object mode and the schema converter. Whitespace between tokens is at most one space (compact
// JSON, as OpenAI's structured outputs write it): with newlines and indentation allowed the demo
// model spent its whole budget on them (tests/integration/structured_output.py, 16 of 24 outputs
// cut by max_tokens), and so a number's digits are bounded too, so a weak model cannot spin
// forever inside one token of syntax.
#pragma once
#include "radiance/grammar/grammar.h"

namespace radiance::grammar {

class JsonPieces {
public:
    static constexpr int kMaxDigits = 16;
    explicit JsonPieces(Grammar& g) : g_(g) {}

    int ws();           // optional whitespace between tokens
    int string_char();  // one character inside a string: plain, or an escape
    int string();       // a whole string
    int integer();      // -?(0|[1-9][0-9]*), bounded
    int number();       // integer, fraction and exponent
    int value();        // any JSON value (a reference to the recursive `value` rule)
    int object();       // any JSON object
    int array();        // any JSON array
    // "{" ws members ws "}" with `member` a key-value pair expression, `n` of them at least.
    int list(const char* open, int item, int min, int max, const char* close);

private:
    Grammar& g_;
    int ws_ = -1, char_ = -1, string_ = -1, integer_ = -1, number_ = -1;
    int value_rule_ = -1, object_rule_ = -1, array_rule_ = -1;
    void recursive_rules();
};

}  // namespace radiance::grammar
