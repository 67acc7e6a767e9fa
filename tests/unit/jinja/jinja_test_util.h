// Helpers shared by the rad_jinja tests. Case tables hold a template, a JSON context and
// the output Jinja2 3.1 produces for them in the environment transformers uses for chat
// templates; every table row becomes one Catch2 section named after its template.
#pragma once

#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "radiance/jinja/template.h"

namespace jinja_test {

struct Case {
    const char* tmpl;
    const char* context;  // JSON object, or "" for none
    const char* expected;
};

struct ErrorCase {
    const char* tmpl;
    const char* context;
    int line;             // template line the error must name
    const char* message;  // a substring the message must contain
};

// strftime_now is pinned so that renders are reproducible.
inline radiance::jinja::Options test_options() {
    radiance::jinja::Options opts;
    opts.strftime_now = [](const std::string& format) { return "FIXED:" + format; };
    return opts;
}

inline std::string render(const std::string& tmpl, const std::string& context = "") {
    radiance::jinja::Template t(tmpl, test_options());
    return t.render(nlohmann::ordered_json::parse(context.empty() ? "{}" : context));
}

template <size_t N>
void check_cases(const Case (&cases)[N]) {
    for (const Case& c : cases) {
        DYNAMIC_SECTION(c.tmpl) {
            INFO("context: " << c.context);
            CHECK(render(c.tmpl, c.context) == c.expected);
        }
    }
}

template <size_t N>
void check_errors(const ErrorCase (&cases)[N]) {
    for (const ErrorCase& c : cases) {
        DYNAMIC_SECTION(c.tmpl) {
            INFO("context: " << c.context);
            try {
                render(c.tmpl, c.context);
                FAIL("rendered without an error");
            } catch (const radiance::jinja::Error& e) {
                CHECK(e.line() == c.line);
                CHECK_THAT(e.what(), Catch::Matchers::Contains(c.message));
            }
        }
    }
}

}  // namespace jinja_test
