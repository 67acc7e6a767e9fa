// child_process.h: run a helper program to its end (the front end converts a model folder with
// rad-convert and lists kernel libraries with radiance-worker, so that it never opens a plugin
// itself), and find the programs installed beside this one.
#pragma once
#include <string>
#include <vector>

namespace radiance::util {

// The folder of the running executable (/proc/self/exe), or "." if it cannot be read.
std::string self_dir();

struct ChildResult {
    int exit_code = -1;  // the program's exit status; 128 + N when killed by signal N; 127: not runnable
    std::string output;  // what it wrote to stdout and stderr, interleaved
};

// Runs argv[0] (a path) with argv, signals unblocked and stdin from /dev/null, and waits for it.
// Throws radiance::Error only when no process can be started (fork or pipe fails).
ChildResult run_child(const std::vector<std::string>& argv);

}  // namespace radiance::util
