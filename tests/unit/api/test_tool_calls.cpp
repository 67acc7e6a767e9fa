// OpenAI tool calls end to end over the fake service and Qwen3's tokenizer and template (whose
// <tool_call> markup picks the hermes parser): tools reach the template, the output's markup
// becomes message.tool_calls (streamed: tool_calls deltas that add up to the same calls),
// finish_reason "tool_calls", broken markup stays text, tool_choice none reads nothing,
// required and named choices constrain the output to calls that parse, and bad tools are 400s.
// Mutations seen failing (then reverted): ChatAnswer not reading calls (the message keeps the
// markup as content); the hermes grammar ending a call with "\n" instead of "\n</tool_call>"
// (the walks' texts end unclosed, which the parser alone would still accept: hence the check on
// the ending); read_openai_tools accepting a tool_choice naming a function not in tools (the 400
// case fails).
#include <catch2/catch.hpp>

#include "api_routes.h"
#include "api_test_util.h"
#include "tool_call_parser.h"
#include "tool_call_stream.h"

using namespace api_test;
using radiance::frontend::GenerationRequest;

namespace {

const json kWeather = json::parse(R"({"type": "function", "function": {"name": "get_weather", "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}, "unit": {"enum": ["c", "f"]}},
                   "required": ["city", "unit"], "additionalProperties": false}}})");
const json kTime = json::parse(R"({"type": "function", "function": {"name": "get_time",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}}, "required": ["zone"]}}})");

json chat(json extra) {
    json b = {{"messages", json::array({{{"role", "user"}, {"content", "Weather in Paris?"}}})}, {"max_tokens", 100}};
    for (auto& [k, v] : extra.items()) b[k] = v;
    return b;
}

FakeGenerationService::Settings says(const std::string& text) {
    FakeGenerationService::Settings s = ApiServer::default_settings();
    s.script = encode(text);
    return s;
}

const std::string kCall = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>";

// The text a constraint leads to, taking the lowest allowed id each time and ending as soon as a
// stop token is allowed.
std::string drive(GenerationRequest& r, int max = 400) {
    REQUIRE(r.constraint);
    std::vector<uint32_t> words((151936 + 31) / 32);
    std::vector<int32_t> ids;
    for (int i = 0; i < max && !r.constraint->complete(); ++i) {
        REQUIRE(r.constraint->allowed(words));
        bool may_stop = false;
        for (int32_t stop : r.stop_token_ids) may_stop = may_stop || (words[static_cast<size_t>(stop) / 32] >> (stop % 32) & 1u);
        if (may_stop) break;
        int32_t t = -1;
        for (size_t w = 0; w < words.size() && t < 0; ++w)
            if (words[w]) t = static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(words[w])));
        REQUIRE(r.constraint->accept(t));
        ids.push_back(t);
    }
    return qwen3_tokenizer().decode(ids);
}

}  // namespace

TEST_CASE("api tool calls: the markup becomes message.tool_calls", "[api]") {
    ApiServer s(says("Let me look.\n" + kCall));
    const Answer a = s.post("/v1/chat/completions", chat({{"tools", {kWeather}}}));
    REQUIRE(a.status == 200);
    const json j = a.json_body();
    const json& m = j["choices"][0]["message"];
    CHECK(m["content"] == "Let me look.\n");
    REQUIRE(m["tool_calls"].size() == 1);
    const json& c = m["tool_calls"][0];
    CHECK(c["id"].get<std::string>().rfind("call_", 0) == 0);
    CHECK(c["type"] == "function");
    CHECK(c["function"]["name"] == "get_weather");
    CHECK(json::parse(c["function"]["arguments"].get<std::string>()) == json{{"city", "Paris"}, {"unit", "c"}});
    CHECK(j["choices"][0]["finish_reason"] == "tool_calls");
    // The tools reached the template.
    const auto prompt = s.service.submitted()[0].prompt;
    CHECK(qwen3_tokenizer().decode(prompt).find("\"name\": \"get_weather\"") != std::string::npos);
    CHECK_FALSE(s.service.submitted()[0].constraint);  // auto: unconstrained
}

TEST_CASE("api tool calls: only markup gives content null, two calls", "[api]") {
    ApiServer s(says(kCall + "\n<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"CET\"}}\n</tool_call>"));
    const json j = s.post("/v1/chat/completions", chat({{"tools", {kWeather, kTime}}})).json_body();
    const json& m = j["choices"][0]["message"];
    CHECK(m["content"].is_null());
    REQUIRE(m["tool_calls"].size() == 2);
    CHECK(m["tool_calls"][1]["function"]["name"] == "get_time");
    CHECK(m["tool_calls"][0]["id"] != m["tool_calls"][1]["id"]);
}

TEST_CASE("api tool calls: streamed as tool_calls deltas", "[api]") {
    auto settings = says("Let me look.\n" + kCall);
    settings.tokens_per_call = 1;
    ApiServer s(settings);
    const Answer a = s.post("/v1/chat/completions", chat({{"tools", {kWeather}}, {"stream", true}}));
    REQUIRE(a.status == 200);
    std::string content, id, name, args, finish;
    int first_deltas = 0;
    for (const auto& ev : parse_sse(a.body)) {
        if (ev.data == "[DONE]") continue;
        const json j = json::parse(ev.data);
        for (const auto& c : j["choices"]) {
            const json& d = c["delta"];
            if (d.contains("content") && d["content"].is_string()) content += d["content"].get<std::string>();
            if (c["finish_reason"].is_string()) finish = c["finish_reason"];
            if (!d.contains("tool_calls")) continue;
            for (const auto& t : d["tool_calls"]) {
                CHECK(t["index"] == 0);
                if (t.contains("id")) {
                    ++first_deltas;
                    id = t["id"];
                    CHECK(t["type"] == "function");
                    name = t["function"]["name"];
                }
                args += t["function"]["arguments"].get<std::string>();
            }
        }
    }
    CHECK(content == "Let me look.\n");  // no markup leaked into the text
    CHECK(first_deltas == 1);
    CHECK(id.rfind("call_", 0) == 0);
    CHECK(name == "get_weather");
    CHECK(json::parse(args) == json{{"city", "Paris"}, {"unit", "c"}});
    CHECK(finish == "tool_calls");
}

TEST_CASE("api tool calls: broken markup is text, tool_choice none reads nothing", "[api]") {
    {
        const std::string broken = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>";
        ApiServer s(says(broken));
        const json j = s.post("/v1/chat/completions", chat({{"tools", {kWeather}}})).json_body();
        CHECK(j["choices"][0]["message"]["content"] == broken);
        CHECK_FALSE(j["choices"][0]["message"].contains("tool_calls"));
        CHECK(j["choices"][0]["finish_reason"] == "stop");
        const Answer st = s.post("/v1/chat/completions", chat({{"tools", {kWeather}}, {"stream", true}}));
        CHECK(chat_stream_text(st.body)[0] == broken);
    }
    ApiServer s(says(kCall));
    const json j = s.post("/v1/chat/completions", chat({{"tools", {kWeather}}, {"tool_choice", "none"}})).json_body();
    CHECK(j["choices"][0]["message"]["content"] == kCall);
    CHECK(j["choices"][0]["finish_reason"] == "stop");
    // vLLM's default: the template still sees the tools.
    CHECK(qwen3_tokenizer().decode(s.service.submitted()[0].prompt).find("get_weather") != std::string::npos);
}

TEST_CASE("api tool calls: required and named choices constrain the output to calls", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/chat/completions", chat({{"tools", {kWeather, kTime}}, {"tool_choice", "required"}})).status == 200);
    GenerationRequest r = s.service.submitted()[0];
    const std::string text = drive(r);
    INFO(text);
    const auto& hermes = *radiance::frontend::tools::find_tool_parser("hermes");
    auto out = radiance::frontend::tools::read_tool_calls(hermes, text, [] { return std::string("x"); });
    REQUIRE(out.calls.size() >= 1);
    CHECK(text.rfind("<tool_call>\n{", 0) == 0);
    CHECK(text.substr(text.size() - 13) == "\n</tool_call>");  // closed, not only read as vLLM reads an unclosed block
    for (const auto& c : out.calls) {
        CHECK((c.name == "get_weather" || c.name == "get_time"));
        CHECK(json::parse(c.arguments).is_object());
    }

    REQUIRE(s.post("/v1/chat/completions",
                   chat({{"tools", {kWeather, kTime}}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "get_time"}}}}}}))
                .status == 200);
    r = s.service.submitted()[1];
    const std::string named = drive(r);
    INFO(named);
    out = radiance::frontend::tools::read_tool_calls(hermes, named, [] { return std::string("x"); });
    REQUIRE(out.calls.size() == 1);  // a named choice is one call
    CHECK(out.calls[0].name == "get_time");
    CHECK(named.substr(named.size() - 13) == "\n</tool_call>");
    CHECK(json::parse(out.calls[0].arguments)["zone"].is_string());
    CHECK(r.constraint->complete());
}

TEST_CASE("api tool calls: a required output is read back as calls", "[api]") {
    // What the grammar lets the model write (compact JSON) is what the answer reads.
    ApiServer s(says("<tool_call>\n{\"name\":\"get_time\",\"arguments\":{\"zone\":\"UTC\"}}\n</tool_call>"));
    const json j = s.post("/v1/chat/completions", chat({{"tools", {kWeather, kTime}}, {"tool_choice", "required"}})).json_body();
    REQUIRE(j["choices"][0]["message"]["tool_calls"].size() == 1);
    CHECK(j["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == R"({"zone":"UTC"})");
    CHECK(j["choices"][0]["finish_reason"] == "tool_calls");
}

TEST_CASE("api tool calls: a required output cut by max_tokens keeps its complete calls", "[api]") {
    const std::string first = "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{\"zone\":\"UTC\"}}\n</tool_call>";
    ApiServer s(says(first + "\n<tool_call>\n{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Par"));
    for (bool stream : {false, true}) {
        const Answer a =
            s.post("/v1/chat/completions", chat({{"tools", {kWeather, kTime}}, {"tool_choice", "required"}, {"stream", stream}}));
        REQUIRE(a.status == 200);
        if (!stream) {
            const json m = a.json_body()["choices"][0]["message"];
            REQUIRE(m["tool_calls"].size() == 1);
            CHECK(m["tool_calls"][0]["function"]["name"] == "get_time");
            CHECK(m["content"].is_null());
        } else {
            CHECK(chat_stream_text(a.body)[0].empty());  // no markup shown as text
        }
    }
    // Unconstrained (auto), the same cut output is text.
    const json j = s.post("/v1/chat/completions", chat({{"tools", {kWeather, kTime}}})).json_body();
    CHECK_FALSE(j["choices"][0]["message"].contains("tool_calls"));
}

TEST_CASE("api tool calls: a template without markup constrains to a JSON array", "[api]") {
    ApiServer s;
    s.ctx.chat_template = "{% for m in messages %}{{ m['content'] }}\n{% endfor %}";
    radiance::frontend::register_api_routes(s.server, s.ctx);
    REQUIRE(
        s.post("/v1/chat/completions", chat({{"tools", {kWeather}}, {"tool_choice", "required"}, {"parallel_tool_calls", false}})).status ==
        200);
    GenerationRequest r = s.service.submitted()[0];
    const std::string text = drive(r);
    INFO(text);
    const json calls = json::parse(text);
    REQUIRE(calls.is_array());
    REQUIRE(calls.size() == 1);  // parallel_tool_calls false: one
    CHECK(calls[0]["name"] == "get_weather");
    CHECK(calls[0]["arguments"]["city"].is_string());
}

TEST_CASE("api tool calls: --tool-call-parser overrides the template's", "[api]") {
    ApiServer s(says(R"({"name": "get_weather", "parameters": {"city": "Oslo", "unit": "f"}})"));
    s.ctx.tool_call_parser = "llama3_json";
    radiance::frontend::register_api_routes(s.server, s.ctx);
    const json j = s.post("/v1/chat/completions", chat({{"tools", {kWeather}}})).json_body();
    REQUIRE(j["choices"][0]["message"]["tool_calls"].size() == 1);
    CHECK(j["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] == R"({"city": "Oslo", "unit": "f"})");
    s.ctx.tool_call_parser = "hermes2";
    CHECK_THROWS_WITH(radiance::frontend::register_api_routes(s.server, s.ctx), Catch::Contains("unknown tool-call parser 'hermes2'"));
}

TEST_CASE("api tool calls: past calls and tool results reach the template", "[api]") {
    ApiServer s;
    const json body = {{"tools", {kWeather}}, {"messages", json::parse(R"([{"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function",
          "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"c\"}"}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "21 C"}])")}};
    REQUIRE(s.post("/v1/chat/completions", body).status == 200);
    const std::string prompt = qwen3_tokenizer().decode(s.service.submitted()[0].prompt);
    CHECK(prompt.find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>") !=
          std::string::npos);
    CHECK(prompt.find("<tool_response>\n21 C\n</tool_response>") != std::string::npos);
}

TEST_CASE("api tool calls: bad tools and tool_choice are 400s naming the field", "[api]") {
    struct Case {
        json extra;
        std::string param, message;
    };
    const json no_name = {{"type", "function"}, {"function", {{"description", "x"}}}};
    const std::vector<Case> cases = {
        {{{"tools", "x"}}, "tools", "'tools' must be an array"},
        {{{"tools", {no_name}}}, "tools[0].function.name", "'tools[0].function.name' must be a non-empty string"},
        {{{"tools", {kWeather, kWeather}}}, "tools[1].function.name", "listed twice"},
        {{{"tools", {{{"type", "retrieval"}}}}}, "tools[0].type", "must be \"function\""},
        {{{"tools", {kWeather}}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}},
         "tool_choice",
         "'tool_choice' names the function 'nope', which is not in 'tools'"},
        {{{"tool_choice", "required"}}, "tool_choice", "'tool_choice' is only allowed when 'tools' are given"},
        {{{"tools", {kWeather}}, {"tool_choice", "always"}}, "tool_choice", "'tool_choice' must be"},
        {{{"tools", {kWeather}}, {"parallel_tool_calls", "yes"}}, "parallel_tool_calls", ""},
        {{{"tools", {kWeather}}, {"tool_choice", "required"}, {"response_format", {{"type", "json_object"}}}},
         "tool_choice",
         "cannot be combined"},
        {{{"tools",
           {{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", {{"type", "object"}, {"not", {{"type", "null"}}}}}}}}}},
          {"tool_choice", "required"}},
         "tools[0].function.parameters",
         "'tools[0].function.parameters' cannot be used for tool_choice at /not: 'not' is not supported"},
    };
    for (const auto& c : cases) {
        ApiServer s;
        INFO(c.extra.dump());
        const Answer a = s.post("/v1/chat/completions", chat(c.extra));
        REQUIRE(a.status == 400);
        const json e = a.json_body()["error"];
        CHECK(e["param"] == c.param);
        CHECK_THAT(e["message"].get<std::string>(), Catch::Contains(c.message));
        CHECK(s.service.submitted().empty());
    }
}

TEST_CASE("api tool calls: n streamed choices each read their own calls", "[api]") {
    auto settings = says(kCall);
    settings.tokens_per_call = 3;
    ApiServer s(settings);
    const Answer a = s.post("/v1/chat/completions", chat({{"tools", {kWeather}}, {"stream", true}, {"n", 2}}));
    REQUIRE(a.status == 200);
    std::map<int, std::string> args, finish;
    std::map<int, int> calls;
    for (const auto& ev : parse_sse(a.body)) {
        if (ev.data == "[DONE]") continue;
        const json chunk = json::parse(ev.data);
        for (const auto& c : chunk["choices"]) {
            const int i = c["index"];
            if (c["finish_reason"].is_string()) finish[i] = c["finish_reason"];
            for (const auto& t : c["delta"].value("tool_calls", json::array())) {
                calls[i] += t.contains("id");
                args[i] += t["function"]["arguments"].get<std::string>();
            }
        }
    }
    for (int i : {0, 1}) {
        CHECK(calls[i] == 1);
        CHECK(json::parse(args[i]) == json{{"city", "Paris"}, {"unit", "c"}});
        CHECK(finish[i] == "tool_calls");
    }
}
