// Python methods on strings, dicts and lists, and Python string formatting.
#include "jinja_test_util.h"

namespace {
using jinja_test::Case;

const Case kStringMethodCases[] = {
    {"{{ 'a,b,,c'.split(',') }}|{{ '  a b  '.split() }}|{{ 'x'.join(['1','2']) }}|{{ ' x '.strip() }}", "",
     "['a', 'b', '', 'c']|['a', 'b']|1x2|x"},
    {"{{ 'a\tb  c\n'.split() }}|{{ 'a,b,c'.split(',', 1) }}|{{ 'a,b,c'.rsplit(',', 1) }}|{{ '  a b  '.split(None, 1) }}|{{ '  a b  "
     "'.rsplit(None, 1) }}",
     "", "['a', 'b', 'c']|['a', 'b,c']|['a,b', 'c']|['a', 'b  ']|['  a', 'b']"},
    {"{{ 'xxhixx'.strip('x') }}|{{ 'hello'.lstrip('he') }}|{{ '  x 　'.strip() }}|{{ 'a\nb\r\nc'.splitlines() }}|{{ 'a.b.c'.partition('.') "
     "}}|{{ 'a.b.c'.rpartition('.') }}",
     "", "hi|llo|x|['a', 'b', 'c']|('a', '.', 'b.c')|('a.b', '.', 'c')"},
    {"{{ 'abc'.startswith('a') }}{{ 'abc'.endswith(('x','c')) }}{{ 'abc'.find('c') }}{{ 'aXbX'.count('X') }}{{ 'a-b'.replace('-', '+') "
     "}}{{ 'héllo'.find('l') }}{{ 'abc'.startswith('b', 1) }}",
     "", "TrueTrue22a+b2True"},
    {"{{ 'Hello'.upper() }}{{ 'Hello'.lower() }}{{ 'hello world'.title() }}{{ \"don't\".title() }}{{ '1st place'.title() }}{{ "
     "'hELLO'.capitalize() }}{{ 'aB'.swapcase() }}",
     "", "HELLOhelloHello WorldDon'T1St PlaceHelloAb"},
    {"{{ 'abc'.center(9, '*') }}|{{ 'ab'.ljust(5) }}|{{ 'ab'.rjust(5, '0') }}|{{ '-42'.zfill(6) }}|{{ '42'.isdigit() }}|{{ 'a1'.isalnum() "
     "}}|{{ 'Ab'.islower() }}|{{ ' '.isspace() }}",
     "", "***abc***|ab   |000ab|-00042|True|True|False|True"},
    {"{{ 'abc'.replace('', '.', 2) }}|{{ 'prefix_x'.removeprefix('prefix_') }}|{{ 'x.txt'.removesuffix('.txt') }}|{{ 'abcabc'.rfind('b') "
     "}}|{{ 'abc'.index('c') }}",
     "", ".a.bc|x|x|4|2"},
    {"{{ message.content.split('</think>')[-1].lstrip('\\n') }}|{{ "
     "message.content.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}",
     "{\"message\": {\"content\": \"<think>\\nhmm\\n</think>\\n\\nA1\"}}", "A1|hmm"},
};

const Case kCollectionMethodCases[] = {
    {"{{ d.get('a') }}|{{ d.get('z', 5) }}|{{ d.get('z') }}|{{ d.keys()|list }}|{{ d.values()|list }}|{{ d|length }}|{{ d.items()|list }}",
     "{\"d\": {\"a\": 1, \"b\": 2}}", "1|5|None|['a', 'b']|[1, 2]|2|[('a', 1), ('b', 2)]"},
    {"{% set x = {'a': 1} %}{% for k in x %}{{ k }}{% endfor %}{{ x.a }}{{ x['a'] }}{{ x.copy() }}", "", "a11{'a': 1}"},
    {"{{ [1, 2, 1].count(1) }}|{{ ['a', 'b'].index('b') }}", "", "2|1"},
};

const Case kPythonFormatCases[] = {
    {"{{ '%s-%d-%.2f' % ('a', 3, 1.5) }}|{{ '%5s|%-5s|' % ('a','b') }}|{{ '{} {}'.format(1, 'x') }}|{{ '{:>5}'.format('a') }}", "",
     "a-3-1.50|    a|b    ||1 x|    a"},
    {"{{ '%05.1f|%x|%o|%e|%g|%c|%%|%r|%+d' % (3.14159, 255, 8, 12345.678, 0.0001, 65, 'q', 5) }}", "",
     "003.1|ff|10|1.234568e+04|0.0001|A|%|'q'|+5"},
    {"{{ '%(a)s-%(b)d' % {'a': 'x', 'b': 2} }}|{{ '%s' % [1, 2] }}|{{ '%s' % none }}", "", "x-2|[1, 2]|None"},
    {"{{ '{0}{1}{0}'.format('a','b') }}|{{ '{x}'.format(x=1) }}|{{ '{:.2f}'.format(3.14159) }}|{{ '{:,}'.format(1234567) }}|{{ "
     "'{:^9}'.format('mid') }}|{{ '{!r}'.format('s') }}|{{ '{:08.3f}'.format(-3.5) }}|{{ '{:x}'.format(255) }}|{{ '{:+}'.format(3) }}",
     "", "aba|1|3.14|1,234,567|   mid   |'s'|-003.500|ff|+3"},
    {"{{ '%s and %s' % ('a', 'b') }}|{{ 'n=%d' % 3.9 }}|{{ '%.3s' % 'abcdef' }}|{{ '%-6d|' % 42 }}|{{ '%06.2f' % -1.5 }}|{{ '% d' % 5 }}",
     "", "a and b|n=3|abc|42    ||-01.50| 5"},
    {"{{ '{0[1]}-{0[0]}'.format(['a', 'b']) }}|{{ '{d[k]}'.format(d={'k': 'v'}) }}|{{ '{{}}{}'.format(1) }}", "", "b-a|v|{}1"},
};

}  // namespace

TEST_CASE("jinja str methods", "[jinja]") { jinja_test::check_cases(kStringMethodCases); }

TEST_CASE("jinja dict and list methods", "[jinja]") { jinja_test::check_cases(kCollectionMethodCases); }

TEST_CASE("jinja printf-style and str.format formatting", "[jinja]") { jinja_test::check_cases(kPythonFormatCases); }
