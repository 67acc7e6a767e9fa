// Jinja rejects unknown filters and tests when it compiles a template, except inside
// "soft" frames (if statements and conditional expressions, not the loops, macros or
// blocks nested in them): there the error waits until the filter is actually called.
#pragma once

#include "ast.h"

namespace radiance::jinja::detail {

// Throws Error(Syntax) naming the line of the first unknown filter or test outside a
// soft frame.
void check_filter_and_test_names(const ParsedTemplate& tmpl);

}  // namespace radiance::jinja::detail
