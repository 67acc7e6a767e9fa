// constraint.h: whether a kernel row's constraint (rad_plugin.h's RadConstraint) holds for a
// value. One matcher, used by kernel selection and by rad-avx-check's own row filter; it needs
// the ABI headers only (rad-avx-check is also built without the project, from a script).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "radiance/rad_plugin.h"

namespace radiance::core {

// `set` is words separated by spaces or commas; null is the empty set.
bool in_constraint_set(const char* set, std::string_view word);

// EQ, LE, GE against c.value; DIV: v is a multiple of c.value (never for 0); IN: v's decimal
// form is in c.set.
bool constraint_holds(const RadConstraint& c, int64_t v);

// "key <= 64", "key % 16 == 0", "key in {a, b}".
std::string describe_constraint(const RadConstraint& c);

}  // namespace radiance::core
