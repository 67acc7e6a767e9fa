// Errors: every syntax or runtime error Jinja raises must surface as an Error that
// names the template line; hostile templates hit limits instead of hanging.
#include "jinja_test_util.h"

namespace {
using jinja_test::ErrorCase;
using radiance::jinja::Error;
using radiance::jinja::Options;
using radiance::jinja::Template;
using radiance::jinja::Value;

const ErrorCase kErrorCases[] = {
    {"line1\n{{ x }", "", 2, "unexpected '}'"},
    {"{% for x in y %}\nbody\n", "", 2, "Unexpected end of template"},
    {"a\n\n{{ x | nofilter }}", "", 3, "No filter named 'nofilter'"},
    {"{{ 1 }}\n{{ x is notest }}", "", 2, "No test named 'notest'"},
    {"{% if x %}\n{% elif %}\n{% endif %}", "", 2, "Expected an expression"},
    {"ok\n{% unknown %}", "", 2, "Encountered unknown tag 'unknown'"},
    {"{% macro m(a=1, b) %}{% endmacro %}", "", 1, "non-default argument"},
    {"{{ 'unterminated }}", "", 1, "unexpected char"},
    {"x\n{# never closed", "", 2, "Missing end of comment tag"},
    {"a\nb\n{{ 'a' + 1 }}", "", 3, "can only concatenate str"},
    {"{% for m in messages %}\n{{ raise_exception('bad role: ' ~ m) }}\n{% endfor %}", "{\"messages\": [\"x\"]}", 2, "bad role: x"},
    {"{{ x.y.z }}", "", 1, "'x' is undefined"},
    {"\n{{ 1 / 0 }}", "", 2, "division by zero"},
    {"{% set ns = {} %}\n{% set ns.a = 1 %}", "", 2, "non-namespace object"},
    {"{{ [].append(1) }}", "", 1, "unsafe"},
    {"{{ d.update({}) }}", "{\"d\": {}}", 1, "unsafe"},
    {"{% macro m(a) %}{% endmacro %}\n{{ m(1, 2) }}", "", 2, "takes not more than 1 argument"},
    {"{% macro m(a) %}{% endmacro %}{{ m(b=2) }}", "", 1, "no keyword argument 'b'"},
    {"{{ range(100001)|length }}", "", 1, "Range too big"},
    {"{% for a, b in [(1, 2, 3)] %}{% endfor %}", "", 1, "too many values to unpack"},
    {"{{ 1 ~ 2 + 3 }}", "", 1, "can only concatenate str"},
    {"{{ 1 < 'a' }}", "", 1, "'<' not supported"},
    {"{% for x in none %}{% endfor %}", "", 1, "not iterable"},
    {"{{ 'x' | int(1, 2, 3) }}", "", 1, "at most"},
    {"{{ x() }}", "", 1, "'x' is undefined"},
    {"{{ 'a'() }}", "", 1, "not callable"},
    {"{{ x + 1 }}", "", 1, "'x' is undefined"},
    {"{{ {[1]: 2} }}", "", 1, "unhashable type"},
    {"{{ 'abc'.split('') }}", "", 1, "empty separator"},
    {"{{ '{} {}'.format(1) }}", "", 1, "out of range"},
    {"{{ '%d' % 'x' }}", "", 1, "a real number is required"},
    {"{{ x | tojson }}", "", 1, "not JSON serializable"},
    {"{{ {'a': 1}|dictsort(by='x') }}", "", 1, "sort by either"},
    {"{{ -'a' }}", "", 1, "bad operand type"},
    {"{% if true %}\n{{ x|no_such_filter }}\n{% endif %}", "", 2, "No filter named 'no_such_filter' found"},
    {"{% for a, in [[1]] %}{% endfor %}", "", 1, "expected token 'in'"},
    {"{{ f(a=1, a=2) }}", "", 1, "keyword argument repeated"},
    {"{% if x[1:] %}{% endif %}", "{\"x\": 5}", 1, "not subscriptable"},
    {"{{ [] in {} }}", "", 1, "unhashable type"},
    {"{{ 'a' is string(1) }}", "", 1, "takes no arguments"},
    {"{{ namespace(undef) }}", "", 1, "'undef' is undefined"},
};

Error::Kind kind_of(const std::string& tmpl) {
    try {
        jinja_test::render(tmpl);
    } catch (const Error& e) {
        return e.kind();
    }
    FAIL("no error");
    return Error::Kind::Runtime;
}

std::string error_of(const Template& t) {
    try {
        t.render(Value());
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST_CASE("jinja errors carry the template line and Jinja's message", "[jinja]") { jinja_test::check_errors(kErrorCases); }

TEST_CASE("jinja error kinds separate syntax, runtime and raise_exception", "[jinja]") {
    CHECK(kind_of("{% if %}") == Error::Kind::Syntax);
    CHECK(kind_of("{{ 1 / 0 }}") == Error::Kind::Runtime);
    CHECK(kind_of("{{ raise_exception('no') }}") == Error::Kind::Raised);
    try {
        jinja_test::render("\n\n{{ raise_exception('Conversation roles must alternate') }}");
    } catch (const Error& e) {
        CHECK(std::string(e.what()) == "template raised exception at line 3: Conversation roles must alternate");
        CHECK(e.message() == "Conversation roles must alternate");
    }
}

TEST_CASE("jinja limits stop runaway templates with an error", "[jinja]") {
    Options opts;
    opts.max_steps = 100000;
    CHECK_THAT(error_of(Template("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", opts)),
               Catch::Matchers::Contains("evaluation steps"));
    opts.max_output_bytes = 1000;
    CHECK_THAT(error_of(Template("{{ 'x' * 5000 }}", opts)), Catch::Matchers::Contains("exceeds the limit"));
    CHECK_THAT(error_of(Template("{% for i in range(5000) %}ab{% endfor %}", opts)), Catch::Matchers::Contains("exceeds the limit"));
    CHECK_THAT(error_of(Template("{% macro r() %}{{ r() }}{% endmacro %}{{ r() }}", opts)), Catch::Matchers::Contains("recursion"));
    CHECK_THAT(error_of(Template("{% set ns = namespace(x=[]) %}{% for i in range(1000) %}{% set ns.x = [ns.x] %}"
                                 "{% endfor %}",
                                 opts)),
               Catch::Matchers::Contains("nested"));
    std::string deep(5000, '(');
    CHECK_THROWS_AS(Template("{{ " + deep + " }}"), Error);
    std::string chain = "{{ 1";
    for (int i = 0; i < 5000; ++i) chain += " + 1";
    CHECK_THROWS_AS(Template(chain + " }}"), Error);
}

TEST_CASE("jinja ints are 64-bit: overflow is an error where Python would grow the int", "[jinja]") {
    CHECK_THROWS_AS(jinja_test::render("{{ 9223372036854775807 + 1 }}"), Error);
    CHECK(jinja_test::render("{{ 9223372036854775807 }}") == "9223372036854775807");
}
