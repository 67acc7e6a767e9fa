// Splits template source into tokens the way Jinja's lexer does, including its
// whitespace rules: trim_blocks drops the first newline after a block or comment tag,
// lstrip_blocks drops spaces and tabs between a line start and a block or comment tag,
// "{%-"/"-%}" (and the {{ }} / {# #} forms) strip all whitespace on that side,
// "{%+"/"+%}" keep it. Comments vanish here; {% raw %} bodies become plain data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace radiance::jinja::detail {

enum class TokenType { Data, VariableBegin, VariableEnd, BlockBegin, BlockEnd, Name, String, Integer, Float, Operator, Eof };

struct Token {
    TokenType type;
    std::string text;  // data, name, operator text, or the unescaped string literal
    int64_t int_value = 0;
    double float_value = 0.0;
    int line = 1;
};

struct LexerOptions {
    bool trim_blocks = true;
    bool lstrip_blocks = true;
    bool keep_trailing_newline = false;
};

// Throws Error(Syntax) with a line number on malformed input. The last token is Eof.
std::vector<Token> tokenize(std::string_view source, const LexerOptions& opts);

// Jinja's names for token types in error messages ("end of print statement", ...).
std::string describe_token(const Token& t);

}  // namespace radiance::jinja::detail
