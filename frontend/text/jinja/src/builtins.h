// Lookup of the builtin filters and tests by name. The parser uses it to reject unknown
// names at parse time, as Jinja does when it compiles a template.
#pragma once

#include <string_view>

#include "radiance/jinja/value.h"

namespace radiance::jinja::detail {

class Evaluator;

using FilterFn = Value (*)(Evaluator& ev, const Value& input, const Args& args);
using TestFn = bool (*)(Evaluator& ev, const Value& input, const Args& args);

FilterFn find_filter(std::string_view name);  // null when unknown
// Filters Jinja passes the render context (map, select, ...): never constant-folded.
bool filter_needs_context(std::string_view name);
TestFn find_test(std::string_view name);  // null when unknown

}  // namespace radiance::jinja::detail
