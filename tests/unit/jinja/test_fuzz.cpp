// Robustness: random and mutated templates must either render or throw
// radiance::jinja::Error, never crash, hang or throw anything else. Mutations start
// from real chat templates so that they reach deep into the parser and evaluator.
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "radiance/jinja/template.h"

namespace {
using nlohmann::ordered_json;
using radiance::jinja::Error;
using radiance::jinja::Options;
using radiance::jinja::Template;

// Tight limits keep every attempt fast, also under sanitizers.
Options fuzz_options() {
    Options opts;
    opts.max_steps = 20000;
    opts.max_output_bytes = 1 << 16;
    opts.max_list_items = 1 << 12;
    opts.max_recursion = 20;
    opts.strftime_now = [](const std::string& f) { return f; };
    return opts;
}

const char* const kFragments[] = {
    "{{",
    "}}",
    "{%",
    "%}",
    "{#",
    "#}",
    "{%-",
    "-%}",
    "{{-",
    "-}}",
    "{%+",
    "+%}",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "|",
    ",",
    ":",
    ".",
    "=",
    "==",
    "!=",
    "<",
    ">=",
    "+",
    "-",
    "*",
    "**",
    "/",
    "//",
    "%",
    "~",
    "'",
    "\"",
    "\\",
    " is ",
    " not ",
    " in ",
    " and ",
    " or ",
    " if ",
    " else ",
    "for x in ",
    "endfor",
    "if ",
    "endif",
    "elif",
    "set ",
    "endset",
    "macro m(a, b=1)",
    "endmacro",
    "call m()",
    "endcall",
    "filter upper",
    "endfilter",
    "loop",
    "loop.index",
    "loop(x)",
    "recursive",
    "namespace(a=1)",
    "ns.a",
    "range(99999)",
    "messages",
    "message.content",
    "tojson(indent=2)",
    "|trim",
    "|length",
    "|join(', ')",
    "|map(attribute='role')",
    "|selectattr('role')",
    "|sort",
    "|unique",
    "|default(1)",
    "|int",
    "|list",
    "|items",
    "raise_exception('x')",
    "caller()",
    "break",
    "continue",
    "raw",
    "endraw",
    "generation",
    "endgeneration",
    "true",
    "none",
    "1e309",
    "9223372036854775807",
    "-1",
    "0",
    "[::-1]",
    "[1:]",
    ".split('a')",
    ".strip()",
    "'%s' % ",
    "'{}'.format",
    "\n",
    "  ",
    "\t",
    "é",
    "\xff",
    "\x00",
    "{{ x }}",
    "{% for x in messages %}",
    "{% endfor %}",
    "{% if x %}",
    "{% endif %}",
};

std::vector<std::string> seed_templates() {
    std::vector<std::string> seeds = {
        "{% for m in messages %}{{ m.role }}: {{ m.content | trim }}\n{% endfor %}",
        "{%- set ns = namespace(n=0) %}{%- for m in messages if m.role != 'system' %}{% set ns.n = ns.n + 1 %}"
        "{{ loop.index }}{{ m | tojson }}{% endfor %}{{ ns.n }}",
        "{% macro show(x, sep=', ') %}{{ x | join(sep) }}{% endmacro %}{% call show([1, 2]) %}{% endcall %}"
        "{{ show(['a']) }}",
        "{% for item in tree recursive %}{{ item.n }}{% if item.c %}({{ loop(item.c) }}){% endif %}{% endfor %}",
        "{{ 'abc'[::-1] ~ (1, 2) | string }}{% filter upper %}{{ range(3) | list }}{% endfilter %}",
    };
    std::ifstream in(RAD_GOLDEN_CHAT_TEMPLATES);
    const ordered_json golden = ordered_json::parse(in);
    for (const auto& [name, source] : golden["templates"].items()) seeds.push_back(source.get<std::string>());
    return seeds;
}

const ordered_json& fuzz_context() {
    static const ordered_json ctx = ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "S"}, {"role": "user", "content": "Q  "},
                 {"role": "assistant", "content": "<think>r</think>A", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]},
                 {"role": "tool", "content": "T"}],
    "tools": [{"type": "function", "function": {"name": "f"}}],
    "tree": [{"n": 1, "c": [{"n": 2}]}],
    "x": [1, "two", null], "add_generation_prompt": true, "bos_token": "<s>"})");
    return ctx;
}

std::string mutate(std::string s, std::mt19937& rng, const std::vector<std::string>& seeds) {
    auto pick = [&](size_t n) { return n == 0 ? size_t{0} : std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
    const int edits = 1 + static_cast<int>(pick(4));
    for (int e = 0; e < edits; ++e) {
        const size_t pos = pick(s.size() + 1);
        switch (pick(6)) {
        case 0: s.insert(pos, kFragments[pick(std::size(kFragments))]); break;
        case 1:
            if (!s.empty()) s.erase(std::min(pos, s.size() - 1), 1 + pick(8));
            break;
        case 2:
            if (!s.empty()) s[std::min(pos, s.size() - 1)] = static_cast<char>(pick(256));
            break;
        case 3: {  // duplicate a span
            const size_t len = pick(32);
            if (pos < s.size()) s.insert(pos, s.substr(pos, len));
            break;
        }
        case 4: {  // splice in part of another template
            const std::string& other = seeds[pick(seeds.size())];
            const size_t from = pick(other.size() + 1);
            s.insert(pos, other.substr(from, pick(64)));
            break;
        }
        default: s.resize(pos); break;  // truncate
        }
    }
    return s;
}

std::string random_template(std::mt19937& rng) {
    std::string s;
    const size_t parts = std::uniform_int_distribution<size_t>(1, 24)(rng);
    for (size_t i = 0; i < parts; ++i) s += kFragments[std::uniform_int_distribution<size_t>(0, std::size(kFragments) - 1)(rng)];
    return s;
}

// Renders or throws Error; anything else fails the test.
void must_render_or_fail_cleanly(const std::string& source) {
    try {
        Template t(source, fuzz_options());
        t.render(fuzz_context());
    } catch (const Error&) {
        // A clean, reported error is fine.
    } catch (const std::exception& e) {
        FAIL("non-Error exception " << e.what() << " for template: " << source);
    }
}
}  // namespace

TEST_CASE("jinja fuzz: mutated real templates render or fail with a clean error", "[jinja][fuzz]") {
    const std::vector<std::string> seeds = seed_templates();
    std::mt19937 rng(20240611);
    for (int i = 0; i < 3000; ++i) {
        const std::string& seed = seeds[static_cast<size_t>(i) % seeds.size()];
        must_render_or_fail_cleanly(mutate(seed, rng, seeds));
    }
}

TEST_CASE("jinja fuzz: random fragment soup renders or fails with a clean error", "[jinja][fuzz]") {
    std::mt19937 rng(7);
    for (int i = 0; i < 3000; ++i) must_render_or_fail_cleanly(random_template(rng));
}

TEST_CASE("jinja fuzz: random bytes render or fail with a clean error", "[jinja][fuzz]") {
    std::mt19937 rng(99);
    std::uniform_int_distribution<int> byte(0, 255);
    for (int i = 0; i < 1000; ++i) {
        std::string s(static_cast<size_t>(byte(rng) % 64), '\0');
        for (char& c : s) c = static_cast<char>(byte(rng));
        must_render_or_fail_cleanly(s);
    }
}
