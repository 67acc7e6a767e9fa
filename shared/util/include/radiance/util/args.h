// args.h: the tools' command lines, one way: walk the arguments, take a flag's value, read it as
// a number in range, and fail with a message that names the flag. Header only (rad-avx-check is
// also built without the project).
//
//   util::Args args(argc, argv);
//   while (args.next()) {
//       if (args.is("--out", "-o")) out = args.value();
//       else if (args.is("--reps")) reps = args.integer(1, 1000);
//       else if (args.positional()) model = args.current();
//       else args.unknown();
//   }
#pragma once
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

namespace radiance::util {

// What a bad command line throws: the message names the flag and what was wrong.
struct ArgsError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Args {
public:
    Args(int argc, char** argv, int first = 1) : argc_(argc), argv_(argv), i_(first - 1) {}

    // Moves to the next argument; false past the last.
    bool next() { return ++i_ < argc_; }
    std::string current() const { return argv_[i_]; }
    bool is(std::string_view flag) const { return current() == flag; }
    bool is(std::string_view flag, std::string_view alias) const { return is(flag) || is(alias); }
    // An argument that is not a flag ("-" alone counts as one: stdin/stdout).
    bool positional() const { return argv_[i_][0] != '-' || current() == "-"; }

    // The argument after the current flag.
    std::string value() {
        if (i_ + 1 >= argc_) throw ArgsError(current() + " needs a value");
        flag_ = current();
        return argv_[++i_];
    }
    // value() as a whole number in [lo, hi].
    long long integer(long long lo, long long hi) {
        const std::string v = value();
        char* end = nullptr;
        errno = 0;
        const long long n = std::strtoll(v.c_str(), &end, 10);
        if (v.empty() || *end || errno || n < lo || n > hi)
            throw ArgsError(flag_ + " must be a whole number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not '" + v + "'");
        return n;
    }
    // value() as a number in [lo, hi].
    double real(double lo, double hi) {
        const std::string v = value();
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (v.empty() || *end || !(x >= lo && x <= hi))
            throw ArgsError(flag_ + " must be a number in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], not '" + v + "'");
        return x;
    }
    [[noreturn]] void unknown() const { throw ArgsError("unknown option " + current()); }

private:
    int argc_;
    char** argv_;
    int i_;
    std::string flag_;  // the flag whose value was taken last
};

}  // namespace radiance::util
