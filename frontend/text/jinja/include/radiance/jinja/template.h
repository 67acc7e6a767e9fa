// A parsed Jinja2 template: parse once, render many times (render is const and may run
// concurrently from several threads). Defaults reproduce the environment transformers
// builds for chat templates (_compile_jinja_template): ImmutableSandboxedEnvironment
// with trim_blocks, lstrip_blocks, keep_trailing_newline=False, the loopcontrols
// extension (break/continue), the {% generation %} tag, and the globals
// raise_exception / strftime_now plus a tojson filter with ensure_ascii=False.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "radiance/jinja/error.h"
#include "radiance/jinja/value.h"

namespace radiance::jinja {

namespace detail {
struct ParsedTemplate;
}

struct Options {
    bool trim_blocks = true;
    bool lstrip_blocks = true;
    bool keep_trailing_newline = false;
    // Jinja's `do` extension ({% do expr %}); transformers does not load it.
    bool enable_do = false;

    // Guards against hostile templates; exceeding one is a runtime Error, never a hang.
    size_t max_output_bytes = size_t{64} << 20;  // also bounds every intermediate string
    size_t max_list_items = size_t{1} << 20;     // bounds lists built by * and range()
    uint64_t max_steps = 50'000'000;             // statements + expressions evaluated
    int max_recursion = 100;                     // nested macro calls and recursive loops

    // strftime_now(format) for the template; empty means the local wall clock. Tests set
    // it to get a fixed date.
    std::function<std::string(const std::string& format)> strftime_now;
};

class Template {
public:
    // Throws Error (Kind::Syntax) with the template line when the source does not parse.
    explicit Template(std::string_view source, Options options = {});

    // `context` must be a dict (or undefined for no variables). Throws Error on failure.
    std::string render(const Value& context) const;
    std::string render(const nlohmann::ordered_json& context) const;
    std::string render(const nlohmann::json& context) const;

    const Options& options() const { return options_; }

private:
    std::shared_ptr<const detail::ParsedTemplate> parsed_;
    Options options_;
};

}  // namespace radiance::jinja
