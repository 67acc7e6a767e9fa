// Global functions every template sees: Jinja's range, dict, namespace, cycler,
// joiner, plus the raise_exception and strftime_now that transformers adds.
#pragma once

#include "radiance/jinja/template.h"
#include "scope.h"

namespace radiance::jinja::detail {

void install_globals(Scope& scope, const Options& options);

}  // namespace radiance::jinja::detail
