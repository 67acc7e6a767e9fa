// list_kernels.h: `radiance-worker --list-kernels [--radiance-home HOMES]` prints each kernel
// library of the homes and what it said about this machine; `radiance --version` shows it, since
// opening plugins is a worker's business and never the front end's.
#pragma once
#include <string>

namespace radiance::worker {

// One line per kernel library: "kernel library NAME VERSION: loaded|declined this machine|not
// used[ (reference)]". Returns the exit code.
int list_kernels(const std::string& homes);

}  // namespace radiance::worker
