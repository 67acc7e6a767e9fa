// schema_strings.h: the JSON-text forms of what a schema says about strings and integers: a
// pattern or a format describes a string's value, so its characters are written as JSON would
// escape them; integer bounds become digit patterns.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "radiance/grammar/grammar.h"

namespace radiance::grammar {

// A JSON string (quotes included) whose value matches the pattern entirely.
int json_string_from_pattern(Grammar& g, const std::string& pattern);
// A JSON string in a known format (date, time, date-time, uuid, email, ipv4, hostname, uri);
// -1 for a format not known here.
int json_string_from_format(Grammar& g, const std::string& format);
// The decimal integers in [lo, hi] (either side open when absent), as JSON writes them.
int integer_range(Grammar& g, std::optional<int64_t> lo, std::optional<int64_t> hi);

}  // namespace radiance::grammar
