// Python string operations with more than a line of logic: str.replace, printf-style
// "%s" % x (also the `format` filter) and str.format().
#pragma once

#include <cstdint>
#include <string>

#include "radiance/jinja/value.h"

namespace radiance::jinja::detail {

class Evaluator;

// str.replace(old, new, count); count < 0 replaces all. An empty `old` inserts `new`
// between characters, as Python does.
std::string py_replace(Evaluator& ev, const std::string& s, const std::string& old, const std::string& repl, int64_t count);
// fmt % args: args is a tuple (several values), a dict (%(name)s) or a single value.
std::string py_percent_format(Evaluator& ev, const std::string& fmt, const Value& args);
// fmt.format(*args, **kwargs)
std::string py_str_format(Evaluator& ev, const std::string& fmt, const Args& args);

}  // namespace radiance::jinja::detail
