// Structured output's wire fields: OpenAI response_format, vLLM structured_outputs and guided_*,
// llama-server json_schema and grammar reach the scheduler as a TokenConstraint whose masks spell
// what was asked (driven here token by token over Qwen3's vocabulary, the first allowed token each
// time), and bad constraints are 400s naming the field and the place in it.
// Mutation seen failing: read_openai_constraint not reading structured_outputs (the regex case
// gets no constraint).
#include <catch2/catch.hpp>

#include "api_test_util.h"

using namespace api_test;
using radiance::frontend::GenerationRequest;

namespace {

// The text a constraint leads to, always taking the lowest allowed id; stops at a stop token or
// when complete.
std::string drive(GenerationRequest& r, int max = 200) {
    REQUIRE(r.constraint);
    std::vector<uint32_t> words((151936 + 31) / 32);
    std::vector<int32_t> ids;
    for (int i = 0; i < max && !r.constraint->complete(); ++i) {
        REQUIRE(r.constraint->allowed(words));
        int32_t t = -1;
        for (size_t w = 0; w < words.size() && t < 0; ++w)
            if (words[w]) t = static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(words[w])));
        if (std::find(r.stop_token_ids.begin(), r.stop_token_ids.end(), t) != r.stop_token_ids.end()) break;
        REQUIRE(r.constraint->accept(t));
        ids.push_back(t);
    }
    return qwen3_tokenizer().decode(ids);
}

json chat(json extra) {
    json b = {{"messages", json::array({{{"role", "user"}, {"content", "hi"}}})}, {"max_tokens", 50}};
    for (auto& [k, v] : extra.items()) b[k] = v;
    return b;
}

}  // namespace

TEST_CASE("api structured output: each wire field becomes the constraint it names", "[api]") {
    struct Case {
        const char* route;
        json body;
        std::string text;  // what the lowest-id walk spells
    };
    const std::vector<Case> cases = {
        {"/v1/chat/completions",
         chat(json::parse(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "a", "strict": true,
              "schema": {"type": "object", "properties": {"k": {"enum": ["no", "yes"]}}, "required": ["k"]}}}})")),
         R"({"k":"no"})"},
        {"/v1/completions", {{"prompt", "x"}, {"structured_outputs", {{"regex", "ab{2}c"}}}}, "abbc"},
        {"/v1/completions", {{"prompt", "x"}, {"structured_outputs", {{"choice", {"zeta", "alpha"}}}}}, "alpha"},
        {"/v1/chat/completions", chat({{"guided_grammar", "root ::= \"(\" [0-9] \")\"\n"}}), "(0)"},
        {"/v1/chat/completions", chat({{"guided_json", R"({"const": [1, 2]})"}}), "[1,2]"},
        {"/completion", {{"prompt", "x"}, {"json_schema", {{"type", "boolean"}}}}, "false"},
        {"/completion", {{"prompt", "x"}, {"grammar", "root ::= \"ok\"\n"}}, "ok"},
    };
    for (const auto& c : cases) {
        ApiServer s;
        INFO(c.route << " " << c.body.dump());
        const Answer a = s.post(c.route, c.body);
        REQUIRE(a.status == 200);
        REQUIRE(s.service.submitted().size() == 1);
        GenerationRequest r = s.service.submitted()[0];
        CHECK(drive(r) == c.text);
    }
    // json_object: an object; text and nothing at all: no constraint
    ApiServer s;
    REQUIRE(s.post("/v1/chat/completions", chat({{"response_format", {{"type", "json_object"}}}})).status == 200);
    GenerationRequest r = s.service.submitted()[0];
    CHECK(drive(r).substr(0, 1) == "{");
    REQUIRE(s.post("/v1/chat/completions", chat({{"response_format", {{"type", "text"}}}})).status == 200);
    CHECK_FALSE(s.service.submitted()[1].constraint);
    REQUIRE(s.post("/v1/chat/completions", chat({})).status == 200);
    CHECK_FALSE(s.service.submitted()[2].constraint);
}

TEST_CASE("api structured output: n choices get a matcher each", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/completions", json{{"prompt", "x"}, {"n", 2}, {"structured_outputs", {{"choice", {"a", "b"}}}}}).status == 200);
    auto sub = s.service.submitted();
    REQUIRE(sub.size() == 2);
    CHECK(sub[0].constraint != sub[1].constraint);
    CHECK(drive(sub[0]) == "a");
    CHECK(drive(sub[1]) == "a");  // the first walk did not move the second's matcher
}

TEST_CASE("api structured output: bad constraints are 400s naming the field and the place", "[api]") {
    struct Case {
        const char* route;
        json body;
        std::string param, message;
    };
    const std::vector<Case> cases = {
        {"/v1/chat/completions", chat(json::parse(R"({"response_format": {"type": "json_schema", "json_schema": {"name": "x",
              "schema": {"type": "object", "properties": {"age": {"type": "integr"}}}}}})")),
         "response_format.json_schema.schema",
         "'response_format.json_schema.schema' cannot be used for structured output at /properties/age/type: unknown type 'integr'"},
        {"/v1/chat/completions", chat({{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}}}}}}),
         "response_format.json_schema.schema", "'response_format.json_schema.schema' is required"},
        {"/v1/chat/completions", chat({{"response_format", {{"type", "xml"}}}}), "response_format.type",
         "'response_format.type' must be 'text', 'json_object' or 'json_schema'"},
        {"/v1/completions",
         {{"prompt", "x"}, {"structured_outputs", {{"regex", "a(b"}}}},
         "structured_outputs.regex",
         "'structured_outputs.regex' cannot be used for structured output at offset 1: unbalanced '('"},
        {"/v1/completions",
         {{"prompt", "x"}, {"structured_outputs", {{"regex", "a"}, {"choice", {"b"}}}}},
         "structured_outputs.choice",
         "only one output constraint may be given; got 'structured_outputs.regex' and 'structured_outputs.choice'"},
        {"/completion",
         {{"prompt", "x"}, {"grammar", "root ::= \"a\"\nroot ::= x\n"}},
         "grammar",
         "'grammar' cannot be used for structured output at line 2, column 1: rule 'root' is defined twice"},
        {"/completion",
         {{"prompt", "x"}, {"json_schema", {{"type", "string"}, {"minLength", 3}, {"maxLength", 1}}}},
         "json_schema",
         "'json_schema' cannot be used for structured output at /: minLength 3 is above maxLength 1"},
        {"/v1/chat/completions", chat({{"guided_json", {{"enum", json::array()}}}}), "guided_json",
         "'guided_json' cannot be used for structured output at /enum: an empty 'enum' allows no value"},
        // satisfiable by no text at all: a required property whose schema refers to itself forever
        {"/v1/chat/completions",
         chat(json::parse(
             R"({"guided_json": {"$defs": {"a": {"type": "object", "properties": {"x": {"$ref": "#/$defs/a"}}, "required": ["x"]}},
              "$ref": "#/$defs/a"}})")),
         "guided_json", "'guided_json' cannot be used for structured output: the grammar matches nothing: no text satisfies it"},
    };
    for (const auto& c : cases) {
        ApiServer s;
        INFO(c.route << " " << c.body.dump());
        const Answer a = s.post(c.route, c.body);
        CHECK(a.status == 400);
        const json j = a.json_body();
        if (c.route == std::string("/completion")) {
            CHECK(j["error"]["message"] == c.message);
        } else {
            CHECK(j["error"]["param"] == c.param);
            CHECK(j["error"]["message"] == c.message);
        }
        CHECK(s.service.submitted().empty());
    }
}

// The stop tokens (EOS) are allowed exactly where the grammar may end: not before "a", and after
// "a" (which may end or go on to "ab"), beside "b"; after "ab" nothing else. Mutation seen failing:
// GrammarConstraint never adding the stop tokens (the second check).
TEST_CASE("api structured output: stop tokens only where the grammar may end", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/completions", json{{"prompt", "x"}, {"structured_outputs", {{"choice", {"a", "ab"}}}}}).status == 200);
    GenerationRequest r = s.service.submitted()[0];
    REQUIRE(!r.stop_token_ids.empty());
    std::vector<uint32_t> words((151936 + 31) / 32);
    auto has = [&](int32_t t) { return ((words[static_cast<size_t>(t) >> 5] >> (t & 31)) & 1u) != 0; };
    const int32_t a = encode("a").at(0), b = encode("b").at(0);
    REQUIRE(r.constraint->allowed(words));
    CHECK(has(a));
    for (int32_t stop : r.stop_token_ids) CHECK_FALSE(has(stop));
    REQUIRE(r.constraint->accept(a));
    REQUIRE(r.constraint->allowed(words));
    CHECK(has(b));
    for (int32_t stop : r.stop_token_ids) CHECK(has(stop));
    CHECK_FALSE(r.constraint->complete());
    REQUIRE(r.constraint->accept(b));
    CHECK(r.constraint->complete());
}
