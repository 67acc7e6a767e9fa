// The one exception type the library throws: a syntax error while parsing, a runtime
// error while rendering (Python would raise TypeError, UndefinedError, ...), or a
// template's own raise_exception(). what() reads "template error at line N: message".
#pragma once

#include <stdexcept>
#include <string>

namespace radiance::jinja {

class Error : public std::runtime_error {
public:
    enum class Kind { Syntax, Runtime, Raised };

    Error(Kind kind, std::string message, int line = 0);

    Kind kind() const { return kind_; }
    // 1-based template line; 0 while not yet known (the evaluator fills it in).
    int line() const { return line_; }
    const std::string& message() const { return message_; }
    Error with_line(int line) const { return Error(kind_, message_, line); }

private:
    Kind kind_;
    std::string message_;
    int line_;
};

}  // namespace radiance::jinja
