// JSON Schema: strings a schema's grammar accepts and refuses (hand-checked against the schema's
// meaning), texts drawn over Qwen3's vocabulary parsed back with nlohmann::json and checked
// against the schema's rules, and errors that name the place in the schema.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <regex>

#include "grammar_test_util.h"

using namespace gtest;
using ojson = nlohmann::ordered_json;

namespace {

std::shared_ptr<const CompiledGrammar> schema(const char* text) { return compile_bytes(json_schema_grammar(ojson::parse(text))); }

std::string error_of(const char* text) {
    try {
        CompiledGrammar::compile(json_schema_grammar(ojson::parse(text)), byte_vocab());
    } catch (const GrammarError& e) {
        return e.where + ": " + e.what();
    }
    return "";
}

const char* kToolCall = R"({
  "type": "object",
  "properties": {
    "name": {"const": "get_weather"},
    "arguments": {
      "type": "object",
      "properties": {
        "location": {"type": "string", "description": "City and country", "maxLength": 40},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "hourly": {"type": "boolean"}
      },
      "required": ["location", "unit"],
      "additionalProperties": false
    }
  },
  "required": ["name", "arguments"],
  "additionalProperties": false
})";

}  // namespace

TEST_CASE("grammar schema: objects keep the order, required and optional properties") {
    auto c =
        schema(R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"boolean"}},"required":["b"]})");
    for (const char* ok :
         {R"({"b":"x"})", R"({"a":1,"b":"x"})", R"({"a": -2, "b": "", "c": true})", R"({"b":"x","c":false})", R"({ "b" : "y" })"})
        CHECK(matches(c, ok));
    for (const char* bad : {R"({})", R"({"a":1})", R"({"b":"x","a":1})", R"({"b":"x","d":1})", R"({"b":1})", R"({"a":1.5,"b":"x"})",
                            R"({"b":"x",})", R"({"b":"x"} )", "{\n  \"b\": \"y\"\n}", R"({"b":  "x"})"})
        CHECK_FALSE(matches(c, bad));
}

TEST_CASE("grammar schema: additionalProperties, nested objects and any object") {
    auto extra = schema(R"({"type":"object","properties":{"a":{"type":"null"}},"additionalProperties":{"type":"number"}})");
    CHECK(matches(extra, R"({"a":null,"x":1,"y":2.5})"));
    CHECK(matches(extra, R"({"x":1})"));
    CHECK_FALSE(matches(extra, R"({"x":"s"})"));
    auto any = schema(R"({"type":"object"})");
    CHECK(matches(any, R"({"k":[1,{"n":null}],"s":"t"})"));
    CHECK_FALSE(matches(any, "[1]"));
    auto tool = schema(kToolCall);
    CHECK(matches(tool, R"({"name":"get_weather","arguments":{"location":"Paris, France","unit":"celsius","days":3}})"));
    CHECK_FALSE(matches(tool, R"({"name":"get_weather","arguments":{"location":"Paris","unit":"kelvin"}})"));
    CHECK_FALSE(matches(tool, R"({"name":"get_weather","arguments":{"location":"Paris","unit":"celsius","days":15}})"));
    CHECK_FALSE(matches(tool, R"({"name":"get_weather","arguments":{"location":"Paris","unit":"celsius","days":0}})"));
    CHECK_FALSE(matches(tool, R"({"name":"other","arguments":{"location":"Paris","unit":"celsius"}})"));
}

TEST_CASE("grammar schema: enums, const, anyOf, type lists, refs") {
    auto e = schema(R"({"enum":["a",1,null,{"k":[true]}]})");
    for (const char* ok : {"\"a\"", "1", "null", R"({"k":[true]})"}) CHECK(matches(e, ok));
    CHECK_FALSE(matches(e, "\"b\""));
    auto any = schema(R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":2}]})");
    CHECK(matches(any, "12"));
    CHECK(matches(any, "\"ab\""));
    CHECK_FALSE(matches(any, "\"abc\""));
    auto types = schema(R"({"type":["string","null"]})");
    CHECK(matches(types, "null"));
    CHECK(matches(types, "\"x\""));
    CHECK_FALSE(matches(types, "1"));
    auto tree = schema(
        R"({"$defs":{"node":{"type":"object","properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}},"required":["v"]}},"$ref":"#/$defs/node"})");
    CHECK(matches(tree, R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[{"v":4,"kids":[]}]}]})"));
    CHECK_FALSE(matches(tree, R"({"v":1,"kids":[{"w":2}]})"));
}

TEST_CASE("grammar schema: arrays with bounds and tuples") {
    auto a = schema(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})");
    CHECK(matches(a, "[1,2]"));
    CHECK(matches(a, "[1, 2, 3]"));
    CHECK_FALSE(matches(a, "[1]"));
    CHECK_FALSE(matches(a, "[1,2,3,4]"));
    CHECK_FALSE(matches(a, "[]"));
    auto t = schema(R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})");
    CHECK(matches(t, R"(["a",1])"));
    CHECK(matches(t, R"(["a"])"));
    CHECK(matches(t, "[]"));
    CHECK_FALSE(matches(t, R"(["a",1,2])"));
    CHECK_FALSE(matches(t, R"([1])"));
}

TEST_CASE("grammar schema: strings with lengths, patterns and formats, and integer ranges") {
    auto len = schema(R"({"type":"string","minLength":2,"maxLength":3})");
    CHECK(matches(len, "\"ab\""));
    CHECK(matches(len, "\"a\\nb\""));  // an escape is one character
    CHECK(matches(len, "\"\xC3\xA9\xC3\xA9\""));
    CHECK_FALSE(matches(len, "\"a\""));
    CHECK_FALSE(matches(len, "\"abcd\""));
    auto pat = schema(R"({"type":"string","pattern":"^[A-Z]{2}-\\d+\"?$"})");
    CHECK(matches(pat, "\"AB-12\""));
    CHECK(matches(pat, "\"AB-12\\\"\""));  // the value's quote, escaped in the JSON text
    CHECK_FALSE(matches(pat, "\"AB-12\"\""));
    CHECK_FALSE(matches(pat, "\"A-12\""));
    auto date = schema(R"({"type":"string","format":"date-time"})");
    CHECK(matches(date, "\"2024-02-29T13:45:00Z\""));
    CHECK(matches(date, "\"2024-02-29T13:45:00.123+05:30\""));
    CHECK_FALSE(matches(date, "\"2024-13-01T00:00:00Z\""));
    auto uuid = schema(R"({"type":"string","format":"uuid"})");
    CHECK(matches(uuid, "\"123e4567-e89b-12d3-a456-426614174000\""));
    CHECK_FALSE(matches(uuid, "\"123e4567\""));
    // Integer ranges against a plain loop over the range (the reference).
    for (auto [lo, hi] : std::vector<std::pair<int, int>>{{-15, 7}, {3, 250}, {0, 0}, {-120, -99}, {95, 1005}}) {
        auto r = schema(("{\"type\":\"integer\",\"minimum\":" + std::to_string(lo) + ",\"maximum\":" + std::to_string(hi) + "}").c_str());
        for (int v = lo - 30; v <= hi + 30; ++v) {
            INFO(lo << ".." << hi << " at " << v);
            CHECK(matches(r, std::to_string(v)) == (v >= lo && v <= hi));
        }
        CHECK_FALSE(matches(r, "-0"));
        CHECK_FALSE(matches(r, "007"));
    }
    auto open = schema(R"({"type":"integer","exclusiveMinimum":9})");
    CHECK(matches(open, "10"));
    CHECK(matches(open, "123456789"));
    CHECK_FALSE(matches(open, "9"));
    CHECK_FALSE(matches(open, "-100"));
}

TEST_CASE("grammar schema: errors name the place in the schema") {
    CHECK(error_of(R"({"type":"string","minLength":5,"maxLength":2})") == "/: minLength 5 is above maxLength 2");
    CHECK(error_of(R"({"properties":{"a":{"type":"strin"}}})") == "/properties/a/type: unknown type 'strin'");
    CHECK(error_of(R"({"properties":{"a":{"enum":[]}}})") == "/properties/a/enum: an empty 'enum' allows no value");
    CHECK(error_of(R"({"properties":{"a":{"type":"string","pattern":"(x"}}})") ==
          "/properties/a/pattern: the pattern does not compile: unbalanced '(' (offset 0)");
    CHECK(error_of(R"({"$ref":"#/$defs/missing"})") == "/$ref: '#/$defs/missing' points at nothing in the schema");
    CHECK(error_of(R"({"type":"integer","minimum":5,"maximum":4})") == "/: no integer lies between the minimum and the maximum");
    CHECK(error_of(R"({"properties":{"a":false},"required":["a"]})") == "/properties/a: property 'a' is required but its schema is false");
    CHECK(error_of(R"({"not":{"type":"string"}})") == "/not: 'not' is not supported");
    CHECK(error_of(R"({"items":{"type":"integer"},"minItems":1,"maxItems":0})") == "/: minItems 1 is above maxItems 0");
    // counts as floats or past int64 are judged before any conversion (1e300 converted to int64
    // first was undefined behaviour; the old cast-then-compare check, put back, fails the first two:
    // it said "must be a non-negative integer" by what the cast happened to give)
    CHECK(error_of(R"({"type":"array","maxItems":1e300})") == "/maxItems: 'maxItems' above 10000 is not supported");
    CHECK(error_of(R"({"type":"string","maxLength":18446744073709551615})") == "/maxLength: 'maxLength' above 10000 is not supported");
    CHECK(error_of(R"({"type":"string","minLength":2.5})") == "/minLength: 'minLength' must be a non-negative integer");
    CHECK(error_of(R"({"type":"string","minLength":-1})") == "/minLength: 'minLength' must be a non-negative integer");
    CHECK(error_of(R"({"type":"array","minItems":"2"})") == "/minItems: 'minItems' must be a non-negative integer");
    // unsatisfiable through a reference cycle with no way out: the grammar matches nothing
    CHECK(error_of(R"({"$defs":{"a":{"type":"object","properties":{"x":{"$ref":"#/$defs/a"}},"required":["x"]}},"$ref":"#/$defs/a"})") ==
          ": the grammar matches nothing: no text satisfies it");
    CHECK(error_of("false") == ": the grammar matches nothing: no text satisfies it");
}

TEST_CASE("grammar schema: a tool call's JSON drawn over Qwen3's vocabulary parses and satisfies the schema") {
    auto c = CompiledGrammar::compile(json_schema_grammar(ojson::parse(kToolCall)), vocab("qwen3"));
    std::mt19937 rng(1);
    int done = 0;
    for (int i = 0; i < 30; ++i) {
        const Drawn d = draw(c, rng, 200, 0.5);
        if (!d.ended) continue;
        ++done;
        INFO(d.text);
        const auto j = nlohmann::json::parse(d.text);
        CHECK(j.at("name") == "get_weather");
        const auto& a = j.at("arguments");
        CHECK(a.at("location").is_string());
        CHECK(a.at("location").get<std::string>().size() <= 40 * 4);
        CHECK((a.at("unit") == "celsius" || a.at("unit") == "fahrenheit"));
        if (a.contains("days")) CHECK((a["days"].is_number_integer() && a["days"] >= 1 && a["days"] <= 14));
        for (auto it = a.begin(); it != a.end(); ++it)
            CHECK((it.key() == "location" || it.key() == "unit" || it.key() == "days" || it.key() == "hourly"));
    }
    CHECK(done >= 20);
}

TEST_CASE("grammar schema: JSON object mode") {
    auto c = compile_bytes(json_object_grammar());
    CHECK(matches(c, R"({"a":[1,2,{"b":"c"}],"d":-1.5e3})"));
    CHECK_FALSE(matches(c, "[]"));
    CHECK_FALSE(matches(c, "\"s\""));
}
