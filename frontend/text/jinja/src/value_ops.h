// Python semantics of values that templates depend on: truthiness, ==, <, type names,
// str() and repr().
#pragma once

#include <string>

#include "radiance/jinja/value.h"

namespace radiance::jinja::detail {

bool truthy(const Value& v);
bool py_equal(const Value& a, const Value& b);
// a < b; throws a runtime Error for types Python cannot order ("'<' not supported ...").
bool py_less(const Value& a, const Value& b);
// Python's hash() works on scalars, strings, tuples of hashables and ranges; lists, dicts
// and views are unhashable (dict keys, set members, `x in dict`).
bool is_hashable(const Value& v);
void require_hashable(const Value& v);
// Python's type(x).__name__: "str", "int", "list", "dict", "NoneType", "Undefined"...
std::string type_name(const Value& v);

// str(x): strings as they are, undefined as "", None as "None", containers as repr.
std::string to_str(const Value& v);
void append_str(std::string& out, const Value& v);
// repr(x): strings quoted and escaped the way Python does it.
std::string to_repr(const Value& v);
std::string repr_string(const std::string& s);
// repr(float): shortest round-trip digits, "1.0", "1e+16", "1e-05", "inf", "nan".
std::string float_repr(double d);

// Throws the UndefinedError Jinja raises when an undefined value is used as an operand.
[[noreturn]] void fail_undefined(const Value& v);
std::string undefined_message(const Value& v);

}  // namespace radiance::jinja::detail
