// Binds the arguments of a builtin (filter, test, global, method) to its parameters
// the way Python binds a simple signature: positionally, then by keyword, then defaults.
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "radiance/jinja/value.h"

namespace radiance::jinja::detail {

struct Param {
    const char* name;
    Value default_value;  // used when the argument is missing
    bool required = false;
};

// Returns one value per parameter. Throws a runtime Error for too many positional
// arguments, unknown or repeated keywords, and missing required parameters.
std::vector<Value> bind_args(std::string_view function, const Args& args, std::initializer_list<Param> params);

// For builtins that take no arguments.
void expect_no_args(std::string_view function, const Args& args);

// Converts an argument that must be an int (bools count), or throws a TypeError-like Error.
int64_t int_arg(std::string_view function, const Value& v);
const std::string& string_arg(std::string_view function, const Value& v);

}  // namespace radiance::jinja::detail
