#include "radiance/jinja/error.h"

namespace radiance::jinja {

namespace {
std::string format_what(Error::Kind kind, const std::string& message, int line) {
    std::string prefix;
    switch (kind) {
    case Error::Kind::Syntax: prefix = "template syntax error"; break;
    case Error::Kind::Runtime: prefix = "template error"; break;
    case Error::Kind::Raised: prefix = "template raised exception"; break;
    }
    if (line > 0) prefix += " at line " + std::to_string(line);
    return prefix + ": " + message;
}
}  // namespace

Error::Error(Kind kind, std::string message, int line)
    : std::runtime_error(format_what(kind, message, line)), kind_(kind), message_(std::move(message)), line_(line) {}

}  // namespace radiance::jinja
