// sources.h: every structured-output source as a Grammar (grammar.h). Each throws GrammarError
// with `where` set to the place in its own input: GBNF "line L, column C", a regular expression
// "offset N", a schema a JSON pointer into it ("/properties/age").
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "radiance/grammar/grammar.h"

namespace radiance::grammar {

// llama.cpp's GBNF (the `grammar` field of llama-server and vLLM): rules `name ::= ...` with
// literals, character classes, `.`, groups, `|`, `* + ?` and `{m}`, `{m,}`, `{m,n}`; `root` is
// where a match starts.
Grammar gbnf_grammar(std::string_view text);

// A regular expression matched against the whole output (Python / ECMAScript syntax without
// backreferences or lookaround; ^ and $ are allowed at the ends).
Grammar regex_grammar(std::string_view pattern);
// The same as one expression inside g (JSON Schema's `pattern`); `where_prefix` goes before the
// offset in errors.
int regex_expr(Grammar& g, std::string_view pattern);

// Exactly one of the strings (vLLM's `choice`).
Grammar choice_grammar(const std::vector<std::string>& choices);

// Any JSON object (OpenAI's {"type": "json_object"}).
Grammar json_object_grammar();

// JSON text valid against a JSON Schema: the subset OpenAI's strict mode allows and more (docs/API.md
// lists what is honoured). Objects keep the schema's property order; properties not listed are
// refused unless additionalProperties says otherwise.
Grammar json_schema_grammar(const nlohmann::ordered_json& schema);

}  // namespace radiance::grammar
