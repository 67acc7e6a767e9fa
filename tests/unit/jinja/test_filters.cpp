// Builtin filters, including transformers' tojson (json.dumps with ensure_ascii=False).
#include "jinja_test_util.h"

namespace {
using jinja_test::Case;

const Case kStringFilterCases[] = {
    {"{{ 'Hello World'|lower }}|{{ 'hello world'|title }}|{{ 'hello'|capitalize }}|{{ 'abc'|upper }}", "",
     "hello world|Hello World|Hello|ABC"},
    {"{{ 'hello'|title }}|{{ 'hello-world foo(bar'|title }}|{{ '1st place'|title }}|{{ \"don't\"|title }}", "",
     "Hello|Hello-World Foo(Bar|1st Place|Don't"},
    {"{{ 'ß'|upper }}|{{ 'ÀÉÎ'|lower }}|{{ 'ÿ'|upper }}|{{ 'ΑΒΓ'|lower }}|{{ 'жук'|upper }}", "", "SS|àéî|Ÿ|αβγ|ЖУК"},
    {"{{ ' x '|trim }}|{{ ' x '|trim('x ') }}|{{ 'xxaxx'|trim('x') }}|{{ '  x 　'|trim }}|{{ none|trim }}", "", "x||a|x|None"},
    {"{{ 'Hello World'|replace('o', '0', 1) }}|{{ 'aaa'|replace('', '-') }}|{{ 'aaa'|replace('a', 'bb') }}", "",
     "Hell0 World|-a-a-a-|bbbbbb"},
    {"{{ 'a\nb\n\nc'|indent(2) }}|{{ 'a\nb'|indent(2, true) }}|{{ 'a\n\nb'|indent(2, blank=true) }}|{{ 'x\ny'|indent('> ') }}|{{ "
     "''|indent(2, true) }}",
     "", "a\n  b\n\n  c|  a\n  b|a\n  \n  b|x\n> y|  "},
    {"{{ 'hello world foo'|truncate(11) }}|{{ 'hello world foo'|truncate(11, true) }}|{{ 'hello world foo'|truncate(11, false, '..', 0) "
     "}}|{{ 'short'|truncate(10) }}",
     "", "hello world foo|hello world foo|hello..|short"},
    {"{{ 'one two\nthree'|wordcount }}|{{ 'a'|center(4) }}|{{ 'hello'|center(11) }}", "", "3| a  |   hello   "},
    {"{{ '<a href=\"x\">link</a> &amp; <!-- c --> text'|striptags }}|{{ '<\"&\\'>'|escape }}|{{ x|e }}|{{ '<b>'|safe }}", "{\"x\": 5}",
     "link & text|&lt;&#34;&amp;&#39;&gt;|5|<b>"},
    {"{{ 'a b&c'|urlencode }}|{{ {'a': 'b c', 'd': 1}|urlencode }}", "", "a%20b%26c|a=b+c&d=1"},
    {"{{ '%s-%s'|format(1, 2) }}|{{ '%(a)s'|format(a=5) }}|{{ 5|string + 'a' }}", "", "1-2|5|5a"},
    {"{{ x|pprint }}", "{\"x\": {\"a\": [1, \"b\"]}}", "{'a': [1, 'b']}"},
};

const Case kJsonFilterCases[] = {
    {"{{ d | tojson }}|{{ d | tojson(indent=2) }}|{{ [] | tojson(indent=2) }}",
     "{\"d\": {\"b\": [1, 2, {\"x\": null}], \"a\": \"é\\n\\\"\", \"c\": {}}}",
     "{\"b\": [1, 2, {\"x\": null}], \"a\": \"é\\n\\\"\", \"c\": {}}|{\n  \"b\": [\n    1,\n    2,\n    {\n      \"x\": null\n    }\n  "
     "],\n  \"a\": \"é\\n\\\"\",\n  \"c\": {}\n}|[]"},
    {"{{ x|tojson }}", "{\"x\": {\"f\": 1.0, \"g\": 1e+100, \"h\": -0.0, \"i\": 0.1, \"j\": 123456789.123, \"k\": [true, false, null]}}",
     "{\"f\": 1.0, \"g\": 1e+100, \"h\": -0.0, \"i\": 0.1, \"j\": 123456789.123, \"k\": [true, false, null]}"},
    {"{{ x|tojson(indent=2, sort_keys=true) }}", "{\"x\": {\"b\": {\"z\": [], \"y\": {}}, \"a\": [1, [2, [3]]]}}",
     "{\n  \"a\": [\n    1,\n    [\n      2,\n      [\n        3\n      ]\n    ]\n  ],\n  \"b\": {\n    \"y\": {},\n    \"z\": []\n  }\n}"},
    {"{{ x|tojson(indent='\t') }}|{{ [1] | tojson(indent=0) }}|{{ 'a' | tojson(indent=none) }}", "{\"x\": {\"a\": [1]}}",
     "{\n\t\"a\": [\n\t\t1\n\t]\n}|[\n1\n]|\"a\""},
    {"{{ {'é': 'ü', 'k\"': '\\u0001'}|tojson }}|{{ {1: 'a', True: 'b', None: 'c', 2.5: 'd'}|tojson }}", "",
     "{\"é\": \"ü\", \"k\\\"\": \"\\u0001\"}|{\"1\": \"b\", \"null\": \"c\", \"2.5\": \"d\"}"},
    {"{{ x|tojson }}", "{\"x\": \"    \177 \\t \\\\ /\"}", "\"    \177 \\t \\\\ /\""},
    {"{{ {'a': 1, 'b': 2}|tojson(sort_keys=true) }}|{{ 'ü😀'|tojson }}|{{ 'ü😀'|tojson(ensure_ascii=true) }}|{{ "
     "[1,2]|tojson(separators=(',', ':')) }}",
     "", "{\"a\": 1, \"b\": 2}|\"ü😀\"|\"\\u00fc\\ud83d\\ude00\"|[1,2]"},
    {"{{ tools|tojson }}",
     "{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\", \"required\": [\"b\", "
     "\"a\"]}}}]}",
     "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"parameters\": {\"type\": \"object\", \"required\": [\"b\", \"a\"]}}}]"},
    {"{{ (1, 2)|tojson }}|{{ 'x'|tojson }}|{{ 3|tojson }}|{{ none|tojson }}", "", "[1, 2]|\"x\"|3|null"},
};

const Case kSequenceFilterCases[] = {
    {"{{ [3,1,2]|sort }}|{{ ['b','A','a']|sort }}|{{ [1,2,2,3]|unique|list }}|{{ [1,2]|reverse|list }}", "",
     "[1, 2, 3]|['A', 'a', 'b']|[1, 2, 3]|[2, 1]"},
    {"{{ ['B','a','C']|sort(case_sensitive=true) }}|{{ ['B','a','C']|sort(reverse=true) }}|{{ ['a','A','b']|unique|list }}|{{ "
     "['a','A']|unique(case_sensitive=true)|list }}",
     "", "['B', 'C', 'a']|['C', 'B', 'a']|['a', 'b']|['a', 'A']"},
    {"{{ users|sort(attribute='age,name')|map(attribute='name')|join }}",
     "{\"users\": [{\"name\": \"b\", \"age\": 2}, {\"name\": \"a\", \"age\": 2}, {\"name\": \"c\", \"age\": 1}]}", "cab"},
    {"{{ users|selectattr('a')|map(attribute='n')|join(', ') }}",
     "{\"users\": [{\"a\": 1, \"n\": \"x\"}, {\"a\": 0, \"n\": \"y\"}, {\"a\": true, \"n\": \"z\"}]}", "x, z"},
    {"{{ [1,2,3,4]|select('odd')|list }}|{{ [1,2,3,4]|reject('even')|list }}|{{ [1,2]|map('string')|join('-') }}", "", "[1, 3]|[1, 3]|1-2"},
    {"{{ users|selectattr('n', 'gt', 1)|list|length }}|{{ users|rejectattr('n', 'equalto', 1)|map(attribute='n')|list }}|{{ [1, 0, none, "
     "'']|select|list }}",
     "{\"users\": [{\"n\": 1}, {\"n\": 3}, {\"n\": 2}]}", "2|[3, 2]|[1]"},
    {"{{ [1,2,3]|select('in', [1,3])|list }}|{{ ['a','bb']|map('length')|list }}|{{ [' a ']|map('trim')|list }}|{{ [[1,2],[3]]|map('join', "
     "'+')|list }}",
     "", "[1, 3]|[1, 2]|['a']|['1+2', '3']"},
    {"{% if [1]|select('even') %}truthy{% endif %}|{{ ([1]|select('even'))|list }}", "", "truthy|[]"},
    {"{% set g = [1,2,3]|select('odd') %}{{ g|list }}{{ g|list }}", "", "[1, 3][]"},
    {"{{ users|map(attribute='a.b')|list }}|{{ users|map(attribute='x', default='D')|list }}",
     "{\"users\": [{\"a\": {\"b\": 1}}, {\"a\": {\"b\": 2}}]}", "[1, 2]|['D', 'D']"},
    {"{{ x|selectattr('a', 'defined')|list }}|{{ x|selectattr('a', 'undefined')|list }}", "{\"x\": [{\"a\": 1}, {\"b\": 2}]}",
     "[{'a': 1}]|[{'b': 2}]"},
    {"{{ x | rejectattr('role', 'equalto', 'system') | list | length }}", "{\"x\": [{\"role\": \"system\"}, {\"role\": \"user\"}]}", "1"},
    {"{{ [1,2,3]|first }}{{ [1,2,3]|last }}{{ []|first }}|{{ 'abc'|first }}|{{ [4,2,8]|min }}{{ [4,2,8]|max }}{{ [1,2,3]|sum }}", "",
     "13|a|286"},
    {"{{ ['bb','a','ccc']|min }}|{{ users|max(attribute='n') }}", "{\"users\": [{\"n\": 1}, {\"n\": 3}, {\"n\": 2}]}", "a|{'n': 3}"},
    {"{{ [1.5, 2]|sum }}|{{ [[1],[2]]|sum(start=[]) }}|{{ users|sum(attribute='n') }}", "{\"users\": [{\"n\": 1}, {\"n\": 2}]}",
     "3.5|[1, 2]|3"},
    {"{{ [1,2,3,4,5]|batch(2)|list }}|{{ [1,2,3,4,5]|slice(2)|list }}|{{ [1,2,3,4,5]|batch(2, 'x')|list }}|{{ [1,2,3,4,5]|slice(3, "
     "'f')|list }}",
     "", "[[1, 2], [3, 4], [5]]|[[1, 2, 3], [4, 5]]|[[1, 2], [3, 4], [5, 'x']]|[[1, 2], [3, 4], [5, 'f']]"},
    {"{{ x|items|list }}|{{ x|dictsort }}|{{ x|dictsort(by='value') }}|{{ x|dictsort(reverse=true) }}",
     "{\"x\": {\"b\": 1, \"a\": 2, \"C\": 0}}",
     "[('b', 1), ('a', 2), ('C', 0)]|[('a', 2), ('b', 1), ('C', 0)]|[('C', 0), ('b', 1), ('a', 2)]|[('C', 0), ('b', 1), ('a', 2)]"},
    {"{{ [1, 'a']|join(', ') }}|{{ 'abc'|list }}|{{ 'abc'|reverse }}|{{ (1, 2)|list }}|{{ x|length }}", "{\"x\": \"héllo\"}",
     "1, a|['a', 'b', 'c']|cba|[1, 2]|5"},
    {"{{ 'abc'|list|reverse|join }}|{{ {'a': 1}|list }}|{{ {'a': 1}|first }}|{{ {'a': 1, 'b': 2}|last }}", "", "cba|['a']|a|b"},
    {"{{ [1,2]|join(',', attribute=0) }}|{{ x|map('upper')|join }}", "{\"x\": \"ab\"}", ",|AB"},
};

const Case kValueFilterCases[] = {
    {"{{ x|default('d') }}|{{ ''|default('e', true) }}|{{ none|default('n') }}|{{ 0|d(5, boolean=true) }}", "", "d|e|None|5"},
    {"{{ '3.7'|int }}|{{ '42'|int }}|{{ 'x'|int(5) }}|{{ 3.9|int }}|{{ '1e3'|int }}|{{ '0x1A'|int(0, 16) }}|{{ '2.5'|float }}", "",
     "3|42|5|3|1000|26|2.5"},
    {"{{ 3.0|int }}|{{ -3.7|int }}|{{ ' 12 '|int }}|{{ '1_000'|int }}|{{ 'inf'|float }}|{{ 'nan'|float }}|{{ none|int }}|{{ true|int }}|{{ "
     "'0b101'|int(0, 0) }}",
     "", "3|-3|12|1000|inf|nan|0|1|5"},
    {"{{ 1e3|int }}|{{ '12abc'|int(-1) }}|{{ '  3.5e2 '|float }}|{{ [1]|float }}", "", "1000|-1|350.0|0.0"},
    {"{{ 2.5|round }}|{{ 3.5|round }}|{{ 2.675|round(2) }}|{{ 3|round }}|{{ 2.1|round(0,'ceil') }}", "", "2.0|4.0|2.67|3|3.0"},
    {"{{ -1.5|round }}|{{ 0.5|round }}|{{ 1.5|round }}|{{ 2.345|round(2) }}|{{ 1234|round(-2) }}|{{ 1.25|round(1, 'floor') }}|{{ "
     "-1.25|round(1, 'ceil') }}",
     "", "-2.0|0.0|2.0|2.35|1200|1.2|-1.2"},
    {"{{ -3|abs }}|{{ -2.5|abs }}|{{ x|attr('a') }}|{{ x|attr('keys') is callable }}", "{\"x\": {\"a\": 1}}", "3|2.5||True"},
    {"{{ 12345|filesizeformat }}|{{ 1|filesizeformat }}|{{ 1048576|filesizeformat(true) }}", "", "12.3 kB|1 Byte|1.0 MiB"},
};

}  // namespace

TEST_CASE("jinja string filters", "[jinja]") { jinja_test::check_cases(kStringFilterCases); }

TEST_CASE("jinja tojson formats like Python's json.dumps", "[jinja]") { jinja_test::check_cases(kJsonFilterCases); }

TEST_CASE("jinja sequence filters", "[jinja]") { jinja_test::check_cases(kSequenceFilterCases); }

TEST_CASE("jinja value filters", "[jinja]") { jinja_test::check_cases(kValueFilterCases); }
