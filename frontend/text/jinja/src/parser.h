// Builds the syntax tree from tokens following Jinja's grammar and precedence: filters
// and tests bind tighter than arithmetic, `**` is left-associative, conditional
// expressions are not allowed in `if`/`for` headers, and unknown filters or tests are
// errors at parse time. Statements: if/elif/else, for (else, filter, recursive), set
// (incl. namespace attributes and block set), macro, call, filter, with, print,
// break/continue, generation (transformers' extension) and, optionally, do.
#pragma once

#include <memory>
#include <string_view>

#include "ast.h"
#include "lexer.h"

namespace radiance::jinja::detail {

struct ParserOptions {
    LexerOptions lexer;
    bool enable_do = false;
};

// Throws Error(Syntax) with the template line on any syntax error.
std::unique_ptr<ParsedTemplate> parse_template(std::string_view source, const ParserOptions& opts);

// Limits that keep hostile templates from exhausting the C++ stack.
constexpr int kMaxParseNesting = 100;  // nested blocks, parentheses, unary operators
constexpr int kMaxExprDepth = 300;     // height of one expression tree

}  // namespace radiance::jinja::detail
