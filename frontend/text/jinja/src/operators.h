// Python's arithmetic and comparison operators on template values: int/float
// promotion, true division, floor division and modulo with Python's signs, string and
// list repetition, "%" formatting on strings. Ints are 64-bit: overflow is an error
// where Python would grow the int.
#pragma once

#include "ast.h"
#include "radiance/jinja/value.h"

namespace radiance::jinja::detail {

class Evaluator;

Value binary_op(Evaluator& ev, Op op, const Value& a, const Value& b);
Value unary_op(Op op, const Value& v);
bool compare_op(Op op, const Value& a, const Value& b);

}  // namespace radiance::jinja::detail
