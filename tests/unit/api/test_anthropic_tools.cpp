// Anthropic tools over the fake service and Qwen3's template: tools reach the template, the
// output's markup becomes tool_use blocks with stop_reason "tool_use" (streamed as a tool_use
// content_block_start with an empty input, input_json_delta events and content_block_stop),
// tool_use / tool_result blocks in messages become the template's tool calls and tool messages,
// tool_choice any / tool constrain the output, count_tokens counts what /v1/messages would send.
// Mutations seen failing (then reverted): the tool_result blocks' messages left out of the prompt
// (the <tool_response> check); count_tokens counting without the tools (20 tokens, not 151);
// tool_choice "any" read as auto (no constraint, and "any" without tools accepted).
#include <catch2/catch.hpp>

#include "api_test_util.h"

using namespace api_test;

namespace {

const json kWeather = json::parse(R"({"name": "get_weather", "description": "Weather for a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}})");

json messages_body(json extra = json::object()) {
    json b = {{"model", "fake-model"}, {"max_tokens", 100}, {"messages", {{{"role", "user"}, {"content", "Weather in Paris?"}}}}};
    b.update(extra);
    return b;
}

FakeGenerationService::Settings says(const std::string& text) {
    FakeGenerationService::Settings s = ApiServer::default_settings();
    s.script = encode(text);
    s.tokens_per_call = 1;
    return s;
}

const std::string kOutput = "Checking.<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

}  // namespace

TEST_CASE("api messages tools: tool_use blocks and stop_reason tool_use", "[api]") {
    ApiServer s(says(kOutput));
    const Answer a = s.post("/v1/messages", messages_body({{"tools", {kWeather}}}));
    REQUIRE(a.status == 200);
    const json j = a.json_body();
    REQUIRE(j["content"].size() == 2);
    CHECK(j["content"][0] == json{{"type", "text"}, {"text", "Checking."}});
    const json& use = j["content"][1];
    CHECK(use["type"] == "tool_use");
    CHECK(use["id"].get<std::string>().rfind("toolu_", 0) == 0);
    CHECK(use["name"] == "get_weather");
    CHECK(use["input"] == json{{"city", "Paris"}});
    CHECK(j["stop_reason"] == "tool_use");
    CHECK(qwen3_tokenizer().decode(s.service.submitted()[0].prompt).find("\"name\": \"get_weather\"") != std::string::npos);
}

TEST_CASE("api messages tools: streamed as content blocks with input_json_delta", "[api]") {
    ApiServer s(says(kOutput));
    const Answer a = s.post("/v1/messages", messages_body({{"tools", {kWeather}}, {"stream", true}}));
    REQUIRE(a.status == 200);
    std::vector<std::string> names;
    std::string text, input;
    json use;
    for (const auto& ev : parse_sse(a.body)) {
        const json d = json::parse(ev.data);
        CHECK(d["type"] == ev.event);
        if (names.empty() || names.back() != ev.event) names.push_back(ev.event);
        if (ev.event == "content_block_start" && d["content_block"]["type"] == "tool_use") {
            use = d["content_block"];
            CHECK(d["index"] == 1);
        }
        if (ev.event == "content_block_delta") {
            if (d["delta"]["type"] == "text_delta") {
                CHECK(d["index"] == 0);
                text += d["delta"]["text"].get<std::string>();
            } else {
                CHECK(d["delta"]["type"] == "input_json_delta");
                CHECK(d["index"] == 1);
                input += d["delta"]["partial_json"].get<std::string>();
            }
        }
        if (ev.event == "message_delta") CHECK(d["delta"]["stop_reason"] == "tool_use");
    }
    CHECK(names == std::vector<std::string>{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop",
                                            "content_block_start", "content_block_delta", "content_block_stop", "message_delta",
                                            "message_stop"});
    CHECK(text == "Checking.");
    CHECK(use["name"] == "get_weather");
    CHECK(use["input"] == json::object());
    CHECK(json::parse(input) == json{{"city", "Paris"}});
}

TEST_CASE("api messages tools: tool_use and tool_result blocks reach the template", "[api]") {
    ApiServer s;
    const json messages = json::parse(R"([
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": [{"type": "text", "text": "Checking."},
            {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "21 C"}]},
            {"type": "text", "text": "Thanks!"}]}])");
    REQUIRE(s.post("/v1/messages", messages_body({{"tools", {kWeather}}, {"messages", messages}})).status == 200);
    const std::string prompt = qwen3_tokenizer().decode(s.service.submitted()[0].prompt);
    INFO(prompt);
    CHECK(prompt.find("Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>") !=
          std::string::npos);
    CHECK(prompt.find("<tool_response>\n21 C\n</tool_response>") != std::string::npos);
    CHECK(prompt.find("<|im_start|>user\nThanks!<|im_end|>") != std::string::npos);
}

TEST_CASE("api messages tools: tool_choice any and tool constrain the output", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/messages", messages_body({{"tools", {kWeather}}, {"tool_choice", {{"type", "any"}}}})).status == 200);
    CHECK(s.service.submitted()[0].constraint);
    REQUIRE(s.post("/v1/messages", messages_body({{"tools", {kWeather}}, {"tool_choice", {{"type", "tool"}, {"name", "get_weather"}}}}))
                .status == 200);
    CHECK(s.service.submitted()[1].constraint);
    REQUIRE(s.post("/v1/messages", messages_body({{"tools", {kWeather}}, {"tool_choice", {{"type", "auto"}}}})).status == 200);
    CHECK_FALSE(s.service.submitted()[2].constraint);
}

TEST_CASE("api messages tools: tool_choice none leaves the markup as text", "[api]") {
    ApiServer s(says(kOutput));
    const json j = s.post("/v1/messages", messages_body({{"tools", {kWeather}}, {"tool_choice", {{"type", "none"}}}})).json_body();
    CHECK(j["content"] == json::array({{{"type", "text"}, {"text", kOutput}}}));
    CHECK(j["stop_reason"] == "end_turn");
}

TEST_CASE("api messages count_tokens: the prompt /v1/messages would build", "[api]") {
    ApiServer s;
    const json body = messages_body({{"tools", {kWeather}}, {"system", "Be brief."}});
    const Answer a = s.post("/v1/messages/count_tokens", body);
    REQUIRE(a.status == 200);
    const json j = a.json_body();
    REQUIRE(s.post("/v1/messages", body).status == 200);
    CHECK(j == json{{"input_tokens", s.service.submitted()[0].prompt.size()}});
    json no_max = body;
    no_max.erase("max_tokens");  // count_tokens takes no max_tokens
    CHECK(s.post("/v1/messages/count_tokens", no_max).json_body() == j);
    const Answer bad = s.post("/v1/messages/count_tokens", json{{"messages", "x"}});
    CHECK(bad.status == 400);
    CHECK(bad.json_body()["type"] == "error");
}

TEST_CASE("api messages tools: bad tools and blocks are 400s in Anthropic's shape", "[api]") {
    struct Case {
        json extra;
        std::string message;
    };
    const std::vector<Case> cases = {
        {{{"tools", "x"}}, "tools: Input should be a valid list"},
        {{{"tools", {{{"description", "no name"}, {"input_schema", {{"type", "object"}}}}}}}, "tools.0.name: Field required"},
        {{{"tools", {{{"name", "f"}}}}}, "tools.0.input_schema: Field required"},
        {{{"tools", {{{"type", "bash_20250124"}, {"name", "bash"}}}}}, "tools.0.type: only custom tools"},
        {{{"tools", {kWeather}}, {"tool_choice", {{"type", "tool"}, {"name", "nope"}}}},
         "tool_choice.name: the tool 'nope' is not in 'tools'"},
        {{{"tool_choice", {{"type", "any"}}}}, "tool_choice: 'any' needs 'tools'"},
        {{{"tools", {kWeather}}, {"tool_choice", "auto"}}, "tool_choice: Input should be an object"},
        {{{"messages", json::parse(R"([{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]}])")}},
         "messages.0.content.0.type: 'tool_use' blocks belong in assistant messages"},
        {{{"messages", json::parse(R"([{"role": "user", "content": [{"type": "image", "source": {}}]}])")}},
         "messages.0.content.0.type: only text, tool_use and tool_result blocks are supported"},
        {{{"messages", json::parse(R"([{"role": "user", "content": [{"type": "tool_result", "content": "x"}]}])")}},
         "messages.0.content.0.tool_use_id: Field required"},
    };
    for (const auto& c : cases) {
        ApiServer s;
        INFO(c.extra.dump());
        const Answer a = s.post("/v1/messages", messages_body(c.extra));
        REQUIRE(a.status == 400);
        const json j = a.json_body();
        CHECK(j["type"] == "error");
        CHECK(j["error"]["type"] == "invalid_request_error");
        CHECK_THAT(j["error"]["message"].get<std::string>(), Catch::Contains(c.message));
    }
}

TEST_CASE("api messages tools: a streamed answer without calls is one text block", "[api]") {
    ApiServer s(says("Hello world! How are you today?"));
    const Answer a = s.post("/v1/messages", messages_body({{"tools", {kWeather}}, {"stream", true}}));
    std::vector<std::string> names;
    std::string text;
    for (const auto& ev : parse_sse(a.body)) {
        const json d = json::parse(ev.data);
        if (names.empty() || names.back() != ev.event) names.push_back(ev.event);
        if (ev.event == "content_block_delta") text += d["delta"]["text"].get<std::string>();
        if (ev.event == "message_delta") CHECK(d["delta"]["stop_reason"] == "end_turn");
    }
    CHECK(names == std::vector<std::string>{"message_start", "ping", "content_block_start", "content_block_delta", "content_block_stop",
                                            "message_delta", "message_stop"});
    CHECK(text == "Hello world! How are you today?");
}
