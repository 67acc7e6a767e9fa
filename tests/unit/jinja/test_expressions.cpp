// Expressions: literals, Python's str()/repr() of values, operators with Python
// semantics, attribute and subscript access, slicing and undefined values.
#include "jinja_test_util.h"

namespace {
using jinja_test::Case;

const Case kLiteralCases[] = {
    {"{{ 1.0 }}|{{ 1e20 }}|{{ 0.00001 }}|{{ 1/3 }}|{{ 1.5e-7 }}|{{ 123456789012345678.0 }}|{{ -0.0 }}", "",
     "1.0|1e+20|1e-05|0.3333333333333333|1.5e-07|1.2345678901234568e+17|-0.0"},
    {"{{ 0x1F }}|{{ 0o17 }}|{{ 0b101 }}|{{ 1_000 }}|{{ 1.5e3 }}|{{ 1E-2 }}", "", "31|15|5|1000|1500.0|0.01"},
    {"{{ true }}{{ True }}{{ false }}{{ none }}{{ None }}", "", "TrueTrueFalseNoneNone"},
    {"{{ \"it's\" }}|{{ ['it\\'s', \"q\\\"\"] }}|{{ 'tab\\there' }}|{{ '\\u00e9\\x41\\101' }}", "", "it's|[\"it's\", 'q\"']|tab\there|éAA"},
    {"{{ \"a\\nb\" }}|{{ 'a\\qb' }}|{{ '\\'' }}|{{ '\\\\' }}|{{ 'x\\\ny' }}|{{ '\\U0001F600' }}", "", "a\nb|a\\qb|'|\\|xy|😀"},
    {"{{ 'a' 'b' \"c\" }}|{{ (1) }}|{{ ((1, 2)) }}|{{ (1,) }}|{{ () }}", "", "abc|1|(1, 2)|(1,)|()"},
    {"{{ [1,2,][0] }}|{{ {'a':1,}['a'] }}|{{ {'a': 1, 'a': 2} }}|{{ {} }}|{{ {'x': [1, (2,)]} }}", "", "1|1|{'a': 2}|{}|{'x': [1, (2,)]}"},
    {"{{ x }}", "{\"x\": [1, \"a\", null, true, 1.5, {\"k\": \"v'\"}]}", "[1, 'a', None, True, 1.5, {'k': \"v'\"}]"},
    {"{{ [none, true, 1.0, 'a', [], {}] }}|{{ ['\"', \"'\", '\\'\"'] }}", "", "[None, True, 1.0, 'a', [], {}]|['\"', \"'\", '\\'\"']"},
    {"{{ ['\\x00\\x1f\\x7f\\x80\\xa0\\u200b\\u2028é😀'] }}", "", "['\\x00\\x1f\\x7f\\x80\\xa0\\u200b\\u2028é😀']"},
    {"{{ x }}|{{ y }}|{{ z }}", "{\"x\": 1e+16, \"y\": -1e-05, \"z\": 0.30000000000000004}", "1e+16|-1e-05|0.30000000000000004"},
};

const Case kOperatorCases[] = {
    {"{{ 2**10 }}|{{ 7//2 }}|{{ -7//2 }}|{{ -7 % 3 }}|{{ 7.5 % 2 }}|{{ 10 / 4 }}|{{ 10 / 5 }}", "", "1024|3|-4|2|1.5|2.5|2.0"},
    {"{{ 1 + True }}|{{ True + True }}|{{ 7 // 2.0 }}|{{ -7 // 2.0 }}|{{ 7 % -3 }}|{{ -7.5 % 2 }}|{{ 2 ** -1 }}|{{ 2.0 ** 0.5 }}|{{ 0 ** 0 "
     "}}",
     "", "2|2|3.0|-4.0|-2|0.5|0.5|1.4142135623730951|1"},
    {"{{ -1|abs }}|{{ -2**2 }}|{{ (-2)**2 }}|{{ 2**3**2 }}|{{ not 1 == 2 }}", "", "1|4|4|64|True"},
    {"{{ 1 ~ 2 * 3 }}|{{ 2 * 3 ~ 4 }}|{{ 1 + 2 * 3 - 4 / 2 }}|{{ 10 - 2 - 3 }}", "", "16|64|5.0|5"},
    {"{{ 'abc' ~ 1 ~ none ~ undefined }}|{{ 'ab' * 3 }}|{{ [1] * 3 }}|{{ 3 * 'x' }}|{{ 'ab' * -1 }}", "", "abc1None|ababab|[1, 1, 1]|xxx|"},
    {"{{ (1, 2) + (3,) }}|{{ [1] + [2] }}|{{ (1,) * 2 }}|{{ 'a' ~ 1.0 ~ 2 ~ true ~ [1] }}", "", "(1, 2, 3)|[1, 2]|(1, 1)|a1.02True[1]"},
    {"{{ a ~ b }}", "{\"a\": [1], \"b\": {\"k\": null}}", "[1]{'k': None}"},
    {"{{ 1 < 2 < 3 }}|{{ 3 > 2 > 5 }}|{{ 1 == 1.0 }}|{{ [1,2] == [1,2] }}|{{ 'a' < 'b' }}", "", "True|False|True|True|True"},
    {"{{ 3 < 2.5 }}|{{ 'a' < 'B' }}|{{ [1, 2] < [1, 3] }}|{{ (1, 'a') < (1, 'b') }}|{{ none == none }}|{{ x == undefined }}", "",
     "False|False|True|True|True|True"},
    {"{{ 1 == 1 == 1 }}|{{ 1 < 2 > 1 }}|{{ 1 in [1] in [[1]] }}|{{ not 1 in [2] }}", "", "True|True|True|True"},
    {"{{ 'a' in 'cat' }}|{{ 2 in [1,2] }}|{{ 'k' in {'k': 1} }}|{{ 'z' not in 'abc' }}|{{ 'ab' in ['ab'] }}", "",
     "True|True|True|True|True"},
    {"{{ not none }}|{{ none or 'x' }}|{{ 0 and 1 }}|{{ [] or {} }}|{{ 'a' and 'b' }}|{{ 1 if [] else 2 }}", "", "True|x|0|{}|b|2"},
    {"{% if not x %}empty{% endif %}{% if y %}full{% endif %}{% if '' %}s{% endif %}{% if 0.0 %}f{% endif %}",
     "{\"x\": [], \"y\": {\"a\": 1}}", "emptyfull"},
    {"{{ 1 if false }}|{{ 'a' if true else 'b' }}|{{ 1 if 0 else 2 if 0 else 3 }}", "", "|a|3"},
    {"{{ 'a' if true else 'b' | upper }}|{{ ('a' if false else 'b') | upper }}", "", "a|B"},
    {"{{ 5 | string | length }}|{{ -5|abs|string }}|{{ 'ab'|upper|lower }}|{{ 'abc' | length > 2 }}", "", "1|5|ab|True"},
};

const Case kAccessCases[] = {
    {"{{ 'abc'[::-1] }}|{{ [1,2,3][1:] }}|{{ 'héllo'[1:3] }}|{{ x[-1] }}", "{\"x\": [1, 2, 3]}", "cba|[2, 3]|él|3"},
    {"{{ 'abcdef'[1:5:2] }}|{{ 'abcdef'[::-2] }}|{{ 'abcdef'[-100:100] }}|{{ 'abcdef'[4:1] }}|{{ 'abcdef'[4:1:-1] }}|{{ [1,2,3][-5] }}", "",
     "bd|fdb|abcdef||edc|"},
    {"{{ [1,2,3][::2] }}{{ [1,2,3][::-1] }}{{ 'abcdef'[-2:] }}{{ 'abcdef'[:-2] }}{{ [1,2,3][5:] }}", "", "[1, 3][3, 2, 1]efabcd[]"},
    {"{{ x.0 }}|{{ x.1.0 }}", "{\"x\": [9, [8]]}", "9|8"},
    {"{{ x[0] }}|{{ x['a'] }}|{{ none.a }}|{{ x.a }}", "{\"x\": [1]}", "1|||"},
    {"{{ messages[0]['role'] }}{{ messages[0].content|trim }}{{ messages|length }}",
     "{\"messages\": [{\"role\": \"user\", \"content\": \"  hi  \"}]}", "userhi1"},
    {"{{ undefined_var }}|{{ undefined_var is defined }}|{{ x.y is defined }}", "{\"x\": {}}", "|False|False"},
    {"{{ d.items is callable }}|{{ d['items'] }}", "{\"d\": {\"items\": 5}}", "True|5"},
    {"{{ x._private }}", "{\"x\": {\"_private\": 1}}", "1"},
    {"{{ x|length }}|{{ x|list }}|{{ x|join }}|{{ x|default('d') }}|{{ x|string }}|{{ x|trim }}|{{ x|items|list }}", "", "0|[]||d|||[]"},
    {"{% for a in x %}no{% else %}empty{% endfor %}|{{ x ~ 'a' }}|{{ 'a' if x }}|{{ (x if x)|default('D') }}", "", "empty|a||D"},
    {"{{ x.append }}|{{ x.update is defined }}", "{\"x\": {}}", "|False"},
    {"{{ d.items() }}|{{ d.keys() }}|{{ d.values() }}|{{ d.keys() is sequence }}|{{ d.keys()[0] }}|{{ range(3) }}|{{ range(0, 9, 2) }}|{{ "
     "range(4)[1] }}",
     "{\"d\": {\"a\": 1}}", "dict_items([('a', 1)])|dict_keys(['a'])|dict_values([1])|False||range(0, 3)|range(0, 9, 2)|1"},
    {"{{ none[::-1] }}|{{ 1[1:]|default('folded') }}|{{ '%s' % 2.5[::-1] }}", "", "|folded|"},
    {"{{ '%s' % undefined }}|{{ 'x' % [1] }}|{{ 'x' % {} }}", "", "|x|x"},
};

}  // namespace

TEST_CASE("jinja literals print as Python prints them", "[jinja]") { jinja_test::check_cases(kLiteralCases); }

TEST_CASE("jinja operators follow Python semantics and Jinja precedence", "[jinja]") { jinja_test::check_cases(kOperatorCases); }

TEST_CASE("jinja attribute, subscript and slice access", "[jinja]") { jinja_test::check_cases(kAccessCases); }
