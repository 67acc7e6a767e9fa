// Whitespace handling: trim_blocks, lstrip_blocks, "-" and "+" modifiers, comments,
// raw blocks, newline normalisation and the dropped final newline.
#include "jinja_test_util.h"

namespace {
using jinja_test::Case;

const Case kWhitespaceCases[] = {
    {"  {% if true %}\n    yes\n  {% endif %}\nend\n", "", "    yes\nend"},
    {"a  {%- if true -%}  b  {%- endif -%}  c", "", "abc"},
    {"{# comment #}\nx\n{#- c -#}\n y", "", "xy"},
    {"a\n  {%+ if true %}x{% endif %}\nb", "", "a\n  xb"},
    {"a\n  {% if true +%}\nx{% endif %}\nb", "", "a\n\nxb"},
    {"a\n\t {% if true %}\n  x\n\t{% endif %}  \nb", "", "a\n  x\n  \nb"},
    {"  {# c #}  \nz\n  {# d #}\nw", "", "  \nz\nw"},
    {"x {{- ' y ' -}} z", "", "x y z"},
    {"x\n\n{{- 'y' }}\n\nz", "", "xy\n\nz"},
    {"{{ 'a' -}}\n\n  b", "", "ab"},
    {"  {{ 'a' }}\n  {% if 1 %}b{% endif %}", "", "  a\nb"},
    {"{% for i in [1,2] %}\n  {{ i }}\n{% endfor %}\n", "", "  1\n  2\n"},
    {"{% for i in [1,2] -%}\n  {{ i }}\n{%- endfor %}", "", "12"},
    {"{%- for m in messages %}\n  {{- m.role }}\n{%- endfor %}", "{\"messages\": [{\"role\": \"a\"}, {\"role\": \"b\"}]}", "ab"},
    {"{% raw %}\n  {{ x }}\n{% endraw %}\nafter", "", "\n  {{ x }}\nafter"},
    {"  {% raw %}x{% endraw %}  y", "", "x  y"},
    {"{%- raw -%}  {{ x }}  {%- endraw -%}  z", "", "{{ x }}z"},
    {"a{# multi\nline\ncomment #}b", "", "ab"},
    {"{{ 1 }}\n", "", "1"},
    {"{{ 1 }}\n\n", "", "1\n"},
    {"a\r\nb\rc", "", "a\nb\nc"},
    {"{% if true %}\r\n  x\r\n{% endif %}\r\n", "", "  x\n"},
    {"line\n    {% set x = 1 %}\n    {{ x }}\n", "", "line\n    1"},
    {"{{ 1 }} {% if true %} a {% endif %} {{ 2 }}", "", "1  a  2"},
    {"{% if true %}a{% endif %}\n{% if true %}b{% endif %}\n", "", "ab"},
};

}  // namespace

TEST_CASE("jinja whitespace control matches Jinja with trim_blocks and lstrip_blocks", "[jinja]") {
    jinja_test::check_cases(kWhitespaceCases);
}

TEST_CASE("jinja keep_trailing_newline and disabled trimming are honoured when asked for", "[jinja]") {
    radiance::jinja::Options opts;
    opts.keep_trailing_newline = true;
    CHECK(radiance::jinja::Template("a\n", opts).render(radiance::jinja::Value()) == "a\n");
    opts.trim_blocks = false;
    opts.lstrip_blocks = false;
    CHECK(radiance::jinja::Template("  {% if 1 %}\nx{% endif %}\n", opts).render(radiance::jinja::Value()) == "  \nx\n");
}
