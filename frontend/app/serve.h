// serve.h: `radiance serve` wired together: the model's container read for what the front end
// needs (names, sizes, tokenizer, chat template), the worker group, the scheduler, metrics, the
// HTTP routes and probes, and the signal thread that drains on SIGTERM.
#pragma once
#include "serve_options.h"

namespace radiance::frontend {

// Serves until SIGTERM/SIGINT (a drain) or a fatal startup error; returns the exit code.
int serve(const ServeOptions& o);

}  // namespace radiance::frontend
