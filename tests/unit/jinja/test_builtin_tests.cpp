// Builtin tests (`x is defined`, `x is string`, ...) and their use through select().
#include "jinja_test_util.h"

namespace {
using jinja_test::Case;

const Case kTestCases[] = {
    {"{{ x is none }}{{ x is not none }}{{ y is true }}{{ y is boolean }}{{ 1 is integer }}{{ 1.0 is float }}{{ 1 is number }}{{ True is "
     "number }}{{ True is integer }}",
     "{\"x\": null, \"y\": true}", "TrueFalseTrueTrueTrueTrueTrueTrueFalse"},
    {"{{ {'a': 1} is mapping }}{{ 'a' is sequence }}{{ {'a':1} is sequence }}{{ 1 is iterable }}{{ 'ab' is lower }}{{ 'AB' is upper }}{{ u "
     "is sequence }}{{ u is iterable }}",
     "", "TrueTrueTrueFalseTrueTrueTrueTrue"},
    {"{% if x is string %}s{% elif x is mapping %}m{% elif x is iterable %}i{% else %}o{% endif %}", "{\"x\": [1]}", "i"},
    {"{{ 5 is divisibleby 3 }}|{{ 6 is divisibleby(3) }}|{{ 10 is even }}{{ 3 is odd }}{{ 3.0 is odd }}{{ 'ab' is in 'cab' }}{{ 2 is in "
     "[1] }}",
     "", "False|True|TrueTrueTrueTrueFalse"},
    {"{{ 2 is gt 1 }}{{ 2 is ge 2 }}{{ 1 is lt 0 }}{{ 1 is ne 2 }}{{ 'a' is eq 'a' }}{{ 1 is le 1 }}{{ 3 is greaterthan 2 }}{{ 1 is "
     "equalto 1 }}",
     "", "TrueTrueFalseTrueTrueTrueTrueTrue"},
    {"{{ x is sameas none }}{{ 1 is sameas 1 }}{{ x is sameas x }}{{ true is sameas true }}", "{\"x\": null}", "TrueTrueTrueTrue"},
    {"{{ 'upper' is filter }}{{ 'nope' is filter }}{{ 'odd' is test }}{{ x is callable }}{{ range is callable }}{{ 'x'.upper is callable "
     "}}",
     "", "TrueFalseTrueTrueTrueTrue"},
    {"{{ x is not defined }}{{ not x is defined }}{{ x is undefined }}{{ enable_thinking is defined and enable_thinking is false }}",
     "{\"enable_thinking\": false}", "TrueTrueTrueTrue"},
    {"{{ 'x' is string and 1 is number }}|{{ 1 + 1 is number }}|{{ -1 is number }}|{{ 2 * 3 is divisibleby 3 }}", "", "True|2|True|2"},
    {"{{ [1,2,3]|select('gt', 1)|list }}|{{ [1,2,3]|select('==', 2)|list }}|{{ ['a', 1]|select('string')|list }}", "", "[2, 3]|[2]|['a']"},
};

}  // namespace

TEST_CASE("jinja builtin tests", "[jinja]") { jinja_test::check_cases(kTestCases); }
