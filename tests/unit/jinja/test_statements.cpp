// Statements: if/for/set/with/macro/call/filter blocks, loop controls and the loop
// variable, Jinja's scoping rules, and the global functions.
#include "jinja_test_util.h"

namespace {
using jinja_test::Case;

const Case kControlFlowCases[] = {
    {"{% if 1 %}a{% elif 2 %}b{% else %}c{% endif %}{% if 0 %}a{% elif 0 %}b{% else %}c{% endif %}{% if 0 %}a{% elif 1 %}b{% endif %}", "",
     "acb"},
    {"{% if 1, 0 %}t{% endif %}{% if () %}t{% else %}f{% endif %}", "", "tf"},
    {"Hello {{ name }}!{% for x in [1,2,3] %}{{ loop.index }}{{ x }}{% endfor %}", "{\"name\": \"W\"}", "Hello W!112233"},
    {"{% for x in [1,2,3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}{% endfor %}|{% for x in [1,2,3] %}{% if x == 2 %}{% break %}{% "
     "endif %}{{ x }}{% endfor %}",
     "", "13|1"},
    {"{% for x in [] %}a{% else %}empty{% endfor %}|{% for x in [1,2,3] if x > 1 %}{{ loop.index }}/{{ loop.length }}{% endfor %}", "",
     "empty|1/22/2"},
    {"{% for x in [1, 2] if x > 5 %}{{ x }}{% else %}none{% endfor %}", "", "none"},
    {"{% for x in [1, 2] %}{% break %}{% else %}else{% endfor %}|{% for x in [1] %}{{ x }}{% else %}else{% endfor %}", "", "else|1"},
    {"{% for i in [1, 2] %}{% for j in [] %}{% else %}{% continue %}{% endfor %}{{ i }}{% endfor %}x", "", "x"},
    {"{% for x in 'ab' %}{{ loop.first }}{{ loop.last }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.index0 }}{{ loop.cycle('o','e') "
     "}}{% endfor %}",
     "", "TrueFalse210oFalseTrue101e"},
    {"{% for i in range(3) %}{{ loop.previtem }}-{{ loop.nextitem }};{% endfor %}", "", "-1;0-2;1-;"},
    {"{% for x in [1] %}{% for y in [2] %}{{ loop.depth }}{{ loop.index }}{% endfor %}{{ loop.index }}{% endfor %}", "", "111"},
    {"{% for x in [1,2] %}{% set outer = loop %}{% for y in [3,4] %}{{ outer.index }}{{ loop.index }} {% endfor %}{% endfor %}", "",
     "11 12 21 22 "},
    {"{% for k, v in d.items() %}{{k}}={{v}};{% endfor %}", "{\"d\": {\"b\": 1, \"a\": 2}}", "b=1;a=2;"},
    {"{% for k, v in {'a': 1}.items() %}{{ k }}{{ v }}{% endfor %}{% for a, (b, c) in [(1, (2, 3))] %}{{ a }}{{ b }}{{ c }}{% endfor %}",
     "", "a1123"},
    {"{% for c in 'hé' %}{{ c }}|{% endfor %}{% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}", "", "h|é|xy"},
    {"{% for x in [1,1,2,3,3] %}{% if loop.changed(x) %}{{ x }}{% endif %}{% endfor %}", "", "123"},
    {"{% for item in tree recursive %}{{ item.n }}({{ loop.depth }}){% if item.c %}[{{ loop(item.c) }}]{% endif %}{% endfor %}",
     "{\"tree\": [{\"n\": \"a\", \"c\": [{\"n\": \"b\", \"c\": [{\"n\": \"c\"}]}]}, {\"n\": \"d\"}]}", "a(1)[b(2)[c(3)]]d(1)"},
    {"{% for message in messages[::-1] %}{{ message }}{% endfor %}", "{\"messages\": [\"a\", \"b\", \"c\"]}", "cba"},
    {"{{ 1 }}{% generation -%}\n  text\n{%- endgeneration %}", "", "1text"},
    {"{% generation %}gen {{ 1 }}{% endgeneration %}", "", "gen 1"},
    {"{% print 1, 2 %}|{% print 'x' %}", "", "12|x"},
    {"{% block b %}in block{% endblock %}|{% block c %}x{% endblock c %}", "", "in block|x"},
    {"{% if false %}{{ x|no_such_filter }}{% endif %}{{ 1 if true else y|nope }}ok", "", "1ok"},
};

const Case kScopingCases[] = {
    {"{% set ns = namespace(a=1) %}{% for i in range(3) %}{% set ns.a = ns.a + i %}{% endfor %}{{ ns.a }}", "", "4"},
    {"{% set x = 1 %}{% for i in range(3) %}{{ x }}{% set x = x + 1 %}{{x}}{% endfor %}{{ x }}", "", "1212121"},
    {"{% if true %}{% set y = 1 %}{% endif %}{{ y }}", "", "1"},
    {"{% for i in [1] %}{% set y = 1 %}{% endfor %}{{ y }}", "", ""},
    {"{% with %}{% set y = 1 %}{% endwith %}{{ y }}", "", ""},
    {"{% set x = 1 %}{% with x = x + 1 %}{{ x }}{% endwith %}{{ x }}", "", "21"},
    {"{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a }}", "", "3"},
    {"{% set x %}{% set y = 2 %}{{ y }}{% endset %}{{ x }}{{ y }}", "", "2"},
    {"{% generation %}{% set z = 1 %}{% endgeneration %}{{ z }}", "", ""},
    {"{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set t = (1,) %}{{ t }}", "", "12(1,)"},
    {"{% set a, b = 'xy' %}{{ b }}{% set a, b = {'k': 1, 'j': 2} %}{{ a }}{{ b }}", "", "ykj"},
    {"{% set ns = namespace() %}{% set ns.x, ns.y = 1, 2 %}{{ ns.x }}{{ ns.y }}", "", "12"},
    {"{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a }}{{ ns.b }}{{ ns.c }}|{{ ns }}", "", "12|<Namespace {'a': 1, 'b': 2}>"},
    {"{% set x %}inner {{ 1 + 1 }}{% endset %}[{{ x }}]{% set y | upper %}abc{% endset %}{{ y }}", "", "[inner 2]ABC"},
    {"{% set messages = messages[1:] %}{{ messages|length }}", "{\"messages\": [1, 2, 3]}", "2"},
};

const Case kMacroCases[] = {
    {"{% macro f(a, b=2) %}{{ a }}-{{ b }}{% endmacro %}{{ f(1) }}|{{ f(1, b=3) }}|{{ f(b=5, a=4) }}", "", "1-2|1-3|4-5"},
    {"{% macro f() %}{{ varargs }}{{ kwargs }}{% endmacro %}{{ f(1, 2, x=3) }}", "", "(1, 2){'x': 3}"},
    {"{% macro m(a, b) %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}|{{ m() }}", "", "1|"},
    {"{% macro m(a, b=a~'!') %}{{ b }}{% endmacro %}{{ m('x') }}", "", "x!"},
    {"{% macro m() %}{% set x = 5 %}{{ x }}{% endmacro %}{% set x = 1 %}{{ m() }}{{ x }}", "", "51"},
    {"{% set a = 1 %}{% macro m() %}{{ a }}{% endmacro %}{% set a = 2 %}{{ m() }}", "", "2"},
    {"{% macro rec(n) %}{{ n }}{% if n > 0 %}{{ rec(n - 1) }}{% endif %}{% endmacro %}{{ rec(5) }}", "", "543210"},
    {"{% macro m() %}{{ m.name }}{% endmacro %}{{ m() }}|{{ m.name }}|{{ m.arguments }}", "", "m|m|()"},
    {"{% macro m(x) %}[{{ x }}{{ caller() }}]{% endmacro %}{% call m(1) %}inner{% endcall %}", "", "[1inner]"},
    {"{% macro m() %}{% for i in range(2) %}{{ caller(i) }}{% endfor %}{% endmacro %}{% call(v) m() %}<{{ v }}>{% endcall %}", "",
     "<0><1>"},
    {"{% filter upper %}hello {{ 'w' }}{% endfilter %}|{% filter trim|upper %}  abc  {% endfilter %}|{% filter replace('a', 'b') %}aaa{% "
     "endfilter %}",
     "", "HELLO W|ABC|bbb"},
};

const Case kGlobalCases[] = {
    {"{{ range(5)|list }}|{{ range(1,10,3)|list }}|{{ range(5,0,-2)|list }}", "", "[0, 1, 2, 3, 4]|[1, 4, 7]|[5, 3, 1]"},
    {"{{ dict(a=1, b=2) }}|{{ dict([('x', 1)]) }}|{{ dict({'q': 1}, r=2) }}", "", "{'a': 1, 'b': 2}|{'x': 1}|{'q': 1, 'r': 2}"},
    {"{% set c = cycler('a','b') %}{{ c.next() }}{{ c.next() }}{{ c.next() }}{{ c.current }}", "", "abab"},
    {"{% set j = joiner('|') %}{% for x in [1,2,3] %}{{ j() }}{{ x }}{% endfor %}", "", "1|2|3"},
    {"{{ strftime_now('%d %b %Y') }}", "", "FIXED:%d %b %Y"},
    {"{{ range(*[3])|list }}|{{ dict(**{'a': 1}) }}", "", "[0, 1, 2]|{'a': 1}"},
};

}  // namespace

TEST_CASE("jinja control flow and the loop variable", "[jinja]") { jinja_test::check_cases(kControlFlowCases); }

TEST_CASE("jinja scoping: loops and blocks do not leak assignments, namespaces do", "[jinja]") { jinja_test::check_cases(kScopingCases); }

TEST_CASE("jinja macros, call blocks and filter blocks", "[jinja]") { jinja_test::check_cases(kMacroCases); }

TEST_CASE("jinja globals: range, dict, cycler, joiner, strftime_now", "[jinja]") { jinja_test::check_cases(kGlobalCases); }

TEST_CASE("jinja do statement is available only when enabled", "[jinja]") {
    radiance::jinja::Options opts;
    CHECK_THROWS_AS(radiance::jinja::Template("{% do 1 %}", opts), radiance::jinja::Error);
    opts.enable_do = true;
    CHECK(radiance::jinja::Template("{% do [1].count(1) %}x", opts).render(radiance::jinja::Value()) == "x");
}
