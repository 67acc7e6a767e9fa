// OpenAI's Responses API over the fake service and Qwen3's tokenizer and template: string and
// item input (instructions first, function_call and function_call_output items as the chat
// template's tool turns), usage, max_output_tokens ending "incomplete", the stream's event order
// with deltas adding up to the text, function calls read out of hermes markup as function_call
// items (answered and streamed), previous_response_id continuing a stored conversation, GET by id,
// 404s for unknown and evicted ids, 400s naming the field, and a failed generation (an error
// event, or a 500, and nothing stored).
// Mutations seen failing (then reverted): ResponseOutput::finish not closing the open item (the
// string-input and max_output_tokens cases fail: status in_progress, no content); the request
// not prepending the stored items of previous_response_id (the continuation and round-trip cases
// fail: the earlier turn is not in the prompt); ResponsesStore::put not evicting past its
// capacity (the evicted id answers 200); outcome_of calling a Length end "completed" (both
// max_output_tokens cases fail); read_responses_tools reading a named tool_choice as auto (no
// constraint, and a name not in tools answers 200).
#include <catch2/catch.hpp>

#include "api_test_util.h"
#include "radiance/jinja/chat_template.h"

using namespace api_test;

namespace {

const std::string kScript = "Hello world! How are you today?";

const json kWeather = json::parse(R"({"type": "function", "name": "get_weather", "description": "Weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": ["c", "f"]}},
                   "required": ["city", "unit"]}})");

const std::string kCall = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>";

json body(json extra = json::object()) {
    json b = {{"model", "fake-model"}, {"input", "Hi there"}};
    b.update(extra);
    return b;
}

FakeGenerationService::Settings says(const std::string& text) {
    FakeGenerationService::Settings s = ApiServer::default_settings();
    s.script = encode(text);
    return s;
}

// The prompt the Qwen3 template makes of chat messages (what the chat path would send).
std::vector<int32_t> expected_prompt(const json& messages) {
    const std::string text = radiance::jinja::render_chat_template(
        qwen3_chat_template(),
        json{{"messages", messages}, {"add_generation_prompt", true}, {"eos_token", "<|im_end|>"}, {"bos_token", ""}});
    return encode(text);
}

std::string last_prompt(const ApiServer& s) { return qwen3_tokenizer().decode(s.service.submitted().back().prompt); }

// A stream's events, each checked to carry its name as data.type and the next sequence_number.
std::vector<json> stream_events(const Answer& a) {
    std::vector<json> out;
    for (const auto& e : parse_sse(a.body)) {
        json d = json::parse(e.data);
        CHECK(d["type"] == e.event);
        CHECK(d["sequence_number"] == out.size());
        out.push_back(std::move(d));
    }
    return out;
}

// The types with runs of one delta type folded into one entry.
std::vector<std::string> folded(const std::vector<json>& events) {
    std::vector<std::string> t;
    for (const auto& e : events)
        if (t.empty() || t.back() != e["type"] || e["type"].get<std::string>().find(".delta") == std::string::npos) t.push_back(e["type"]);
    return t;
}

}  // namespace

TEST_CASE("api responses: string input answers a response object with a message", "[api][responses]") {
    ApiServer s;
    const Answer a = s.post("/v1/responses", body());
    REQUIRE(a.status == 200);
    const json j = a.json_body();
    CHECK(j["object"] == "response");
    CHECK(j["id"].get<std::string>().rfind("resp_", 0) == 0);
    CHECK(j["status"] == "completed");
    CHECK(j["incomplete_details"].is_null());
    CHECK(j["error"].is_null());
    CHECK(j["model"] == "fake-model");
    CHECK(j["created_at"].is_number_integer());
    REQUIRE(j["output"].size() == 1);
    const json& m = j["output"][0];
    CHECK(m["type"] == "message");
    CHECK(m["id"].get<std::string>().rfind("msg_", 0) == 0);
    CHECK(m["role"] == "assistant");
    CHECK(m["status"] == "completed");
    CHECK(m["content"] == json::array({{{"type", "output_text"}, {"text", kScript}, {"annotations", json::array()}}}));

    const auto sub = s.service.submitted();
    REQUIRE(sub.size() == 1);
    CHECK(sub[0].prompt == expected_prompt(json::array({{{"role", "user"}, {"content", "Hi there"}}})));
    CHECK(j["usage"]["input_tokens"] == sub[0].prompt.size());
    CHECK(j["usage"]["output_tokens"] == encode(kScript).size() + 1);  // and the EOS
    CHECK(j["usage"]["total_tokens"] == sub[0].prompt.size() + encode(kScript).size() + 1);
    CHECK(j["usage"]["input_tokens_details"]["cached_tokens"] == 0);
    CHECK(j["usage"]["output_tokens_details"]["reasoning_tokens"] == 0);
}

TEST_CASE("api responses: items with instructions become the chat prompt", "[api][responses]") {
    ApiServer s;
    const json input = json::parse(R"([
        {"role": "developer", "content": "Answer in French."},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Hi"}, {"type": "input_text", "text": "there"}]},
        {"role": "assistant", "content": [{"type": "output_text", "text": "Bonjour", "annotations": []}]},
        {"role": "user", "content": "How are you?"}])");
    const Answer a = s.post("/v1/responses", body({{"input", input}, {"instructions", "Be brief."}}));
    REQUIRE(a.status == 200);
    CHECK(a.json_body()["instructions"] == "Be brief.");
    CHECK(s.service.submitted().back().prompt == expected_prompt(json::parse(R"([
        {"role": "system", "content": "Be brief."}, {"role": "system", "content": "Answer in French."},
        {"role": "user", "content": "Hi\nthere"}, {"role": "assistant", "content": "Bonjour"},
        {"role": "user", "content": "How are you?"}])")));
}

TEST_CASE("api responses: max_output_tokens ends incomplete", "[api][responses]") {
    ApiServer s;
    const json j = s.post("/v1/responses", body({{"max_output_tokens", 3}})).json_body();
    const auto ids = encode(kScript);
    CHECK(j["status"] == "incomplete");
    CHECK(j["incomplete_details"] == json{{"reason", "max_output_tokens"}});
    CHECK(j["max_output_tokens"] == 3);
    CHECK(j["output"][0]["status"] == "incomplete");
    REQUIRE(j["output"][0]["content"].size() == 1);
    CHECK(j["output"][0]["content"][0]["text"] == qwen3_tokenizer().decode(std::vector<int32_t>(ids.begin(), ids.begin() + 3)));
    CHECK(j["usage"]["output_tokens"] == 3);
    CHECK(s.service.submitted().back().max_tokens == 3);
}

TEST_CASE("api responses: the stream's events come in order and its deltas add up to the text", "[api][responses]") {
    ApiServer s;
    const Answer a = s.post("/v1/responses", body({{"stream", true}}));
    REQUIRE(a.status == 200);
    CHECK(a.headers.at("Content-Type") == "text/event-stream");
    const auto events = stream_events(a);
    CHECK(folded(events) == std::vector<std::string>{"response.created", "response.in_progress", "response.output_item.added",
                                                     "response.content_part.added", "response.output_text.delta",
                                                     "response.output_text.done", "response.content_part.done", "response.output_item.done",
                                                     "response.completed"});
    std::string text;
    for (const auto& e : events)
        if (e["type"] == "response.output_text.delta") {
            text += e["delta"].get<std::string>();
            CHECK(e["output_index"] == 0);
            CHECK(e["content_index"] == 0);
        }
    CHECK(text == kScript);
    const json& created = events.front()["response"];
    CHECK(created["status"] == "in_progress");
    CHECK(created["output"].empty());
    const json& done = events.back()["response"];
    CHECK(done["id"] == created["id"]);
    CHECK(done["status"] == "completed");
    CHECK(done["output"][0]["content"][0]["text"] == kScript);
    CHECK(done["usage"]["output_tokens"] == encode(kScript).size() + 1);
    const std::string item_id = events[2]["item"]["id"];
    for (const auto& e : events)
        if (e.contains("item_id")) CHECK(e["item_id"] == item_id);
    CHECK(events[events.size() - 4]["text"] == kScript);  // output_text.done
    // A streamed response is stored too.
    const Answer g = s.get("/v1/responses/" + done["id"].get<std::string>());
    REQUIRE(g.status == 200);
    CHECK(g.json_body() == done);
}

TEST_CASE("api responses: a stream cut by max_output_tokens ends with response.incomplete", "[api][responses]") {
    ApiServer s;
    const auto events = stream_events(s.post("/v1/responses", body({{"stream", true}, {"max_output_tokens", 3}})));
    REQUIRE(!events.empty());
    CHECK(events.back()["type"] == "response.incomplete");
    CHECK(events.back()["response"]["status"] == "incomplete");
    CHECK(events.back()["response"]["incomplete_details"]["reason"] == "max_output_tokens");
    CHECK(events[events.size() - 2]["item"]["status"] == "incomplete");
}

TEST_CASE("api responses: a function call becomes a function_call item", "[api][responses]") {
    ApiServer s(says("Let me look.\n" + kCall));
    const json j = s.post("/v1/responses", body({{"input", "Weather in Paris?"}, {"tools", {kWeather}}})).json_body();
    REQUIRE(j["output"].size() == 2);
    CHECK(j["output"][0]["type"] == "message");
    CHECK(j["output"][0]["content"][0]["text"] == "Let me look.");  // the whitespace before a call is dropped
    const json& c = j["output"][1];
    CHECK(c["type"] == "function_call");
    CHECK(c["id"].get<std::string>().rfind("fc_", 0) == 0);
    CHECK(c["call_id"].get<std::string>().rfind("call_", 0) == 0);
    CHECK(c["name"] == "get_weather");
    CHECK(c["status"] == "completed");
    CHECK(json::parse(c["arguments"].get<std::string>()) == json{{"city", "Paris"}, {"unit", "c"}});
    CHECK(j["tools"] == json::array({kWeather}));
    CHECK(j["status"] == "completed");
    // The tool reached the template.
    CHECK(last_prompt(s).find("\"name\": \"get_weather\"") != std::string::npos);

    SECTION("streamed, as an output item with argument deltas") {
        const auto events = stream_events(s.post("/v1/responses", body({{"input", "Weather?"}, {"tools", {kWeather}}, {"stream", true}})));
        const std::vector<std::string> want = {"response.created",
                                               "response.in_progress",
                                               "response.output_item.added",
                                               "response.content_part.added",
                                               "response.output_text.delta",
                                               "response.output_text.done",
                                               "response.content_part.done",
                                               "response.output_item.done",
                                               "response.output_item.added",
                                               "response.function_call_arguments.delta",
                                               "response.function_call_arguments.done",
                                               "response.output_item.done",
                                               "response.completed"};
        CHECK(folded(events) == want);
        std::string args;
        for (const auto& e : events) {
            if (e["type"] == "response.function_call_arguments.delta") {
                args += e["delta"].get<std::string>();
                CHECK(e["output_index"] == 1);
            }
            if (e["type"] == "response.function_call_arguments.done") {
                CHECK(e["arguments"] == args);
                CHECK(e["name"] == "get_weather");
            }
        }
        CHECK(json::parse(args) == json{{"city", "Paris"}, {"unit", "c"}});
        const json& out = events.back()["response"]["output"];
        REQUIRE(out.size() == 2);
        CHECK(out[0]["content"][0]["text"] == "Let me look.");
        CHECK(out[1]["arguments"] == args);
        CHECK(out[1]["status"] == "completed");
    }
}

// Items without their random ids, to compare two answers.
json without_ids(json items) {
    for (auto& item : items) {
        item.erase("id");
        item.erase("call_id");
    }
    return items;
}

// The whole answer reads its text token by token as a stream does, so the items agree. One limit:
// text between two calls that reach the stream in the same delta is shown before both (the
// parser's content is all the text outside markup, not where it stood), so the text between
// calls is checked here in deltas of up to 3 tokens only.
TEST_CASE("api responses: a stream and a whole answer give the same items however the text is cut", "[api][responses]") {
    const std::string between = kCall + "\nAnd then some.\n" + kCall;
    for (const std::string& text : {"Let me look.\n" + kCall, kCall + "\n", std::string("  Done.  "), between}) {
        for (size_t per_call : {1, 3, 64}) {
            if (text == between && per_call > 3) continue;
            auto settings = says(text);
            settings.tokens_per_call = per_call;
            ApiServer s(settings);
            const json b = body({{"tools", {kWeather}}});
            const json whole = s.post("/v1/responses", b).json_body();
            json streamed_body = b;
            streamed_body["stream"] = true;
            const auto events = stream_events(s.post("/v1/responses", streamed_body));
            REQUIRE(!events.empty());
            INFO(text << " in pieces of " << per_call);
            CHECK(without_ids(events.back()["response"]["output"]) == without_ids(whole["output"]));
            if (text == between) {
                REQUIRE(whole["output"].size() == 3);
                CHECK(whole["output"][1]["content"][0]["text"] == "And then some.");
            }
        }
    }
}

TEST_CASE("api responses: tool_choice required constrains the output to a call", "[api][responses]") {
    ApiServer s(says(kCall));
    const json j = s.post("/v1/responses", body({{"tools", {kWeather}}, {"tool_choice", "required"}})).json_body();
    CHECK(s.service.submitted().back().constraint != nullptr);
    REQUIRE(j["output"].size() == 1);
    CHECK(j["output"][0]["type"] == "function_call");
    CHECK(j["tool_choice"] == "required");
}

TEST_CASE("api responses: function_call and function_call_output items reach the template", "[api][responses]") {
    ApiServer s;
    const json input = json::parse(R"([
        {"role": "user", "content": "Weather in Paris?"},
        {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"c\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": "21 C"}])");
    REQUIRE(s.post("/v1/responses", body({{"input", input}, {"tools", {kWeather}}})).status == 200);
    const std::string prompt = last_prompt(s);
    CHECK(prompt.find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"c\"}}\n</tool_call>") !=
          std::string::npos);
    CHECK(prompt.find("<tool_response>\n21 C\n</tool_response>") != std::string::npos);

    SECTION("a call answered by the model, sent back with its output") {
        ApiServer t(says(kCall));
        const json first = t.post("/v1/responses", body({{"input", "Weather in Paris?"}, {"tools", {kWeather}}})).json_body();
        const json call = first["output"][0];
        REQUIRE(call["type"] == "function_call");
        json next = json::array({{{"type", "function_call_output"}, {"call_id", call["call_id"]}, {"output", "21 C"}}});
        const Answer a = t.post("/v1/responses", body({{"input", next}, {"tools", {kWeather}}, {"previous_response_id", first["id"]}}));
        REQUIRE(a.status == 200);
        const std::string p = last_prompt(t);
        const size_t q = p.find("Weather in Paris?"), c = p.find("<tool_call>\n{\"name\": \"get_weather\""),
                     r = p.find("<tool_response>\n21 C\n</tool_response>");
        CHECK(q != std::string::npos);
        CHECK(c != std::string::npos);
        CHECK(r != std::string::npos);
        CHECK(q < c);
        CHECK(c < r);
    }
}

TEST_CASE("api responses: previous_response_id continues the conversation", "[api][responses]") {
    ApiServer s;
    const json first = s.post("/v1/responses", body({{"input", "My name is Ada."}, {"instructions", "Be terse."}})).json_body();
    const Answer a = s.post("/v1/responses", body({{"input", "What is my name?"}, {"previous_response_id", first["id"]}}));
    REQUIRE(a.status == 200);
    CHECK(a.json_body()["previous_response_id"] == first["id"]);
    // The earlier turn, its answer, then the new input; instructions are not carried over (as OpenAI).
    CHECK(s.service.submitted().back().prompt == expected_prompt(json::parse(R"([
        {"role": "user", "content": "My name is Ada."}, {"role": "assistant", "content": "Hello world! How are you today?"},
        {"role": "user", "content": "What is my name?"}])")));
    // And a third turn carries both.
    const json second = a.json_body();
    REQUIRE(s.post("/v1/responses", body({{"input", "Thanks"}, {"previous_response_id", second["id"]}})).status == 200);
    const std::string p = last_prompt(s);
    CHECK(p.find("My name is Ada.") < p.find("What is my name?"));
    CHECK(p.find("What is my name?") < p.find("Thanks"));
}

TEST_CASE("api responses: GET /v1/responses/{id} answers the stored response", "[api][responses]") {
    ApiServer s;
    const json j = s.post("/v1/responses", body({{"metadata", {{"k", "v"}}}})).json_body();
    CHECK(j["metadata"] == json{{"k", "v"}});
    CHECK(j["store"] == true);
    const Answer g = s.get("/v1/responses/" + j["id"].get<std::string>());
    REQUIRE(g.status == 200);
    CHECK(g.json_body() == j);

    SECTION("store false keeps nothing") {
        const json n = s.post("/v1/responses", body({{"store", false}})).json_body();
        CHECK(n["store"] == false);
        CHECK(s.get("/v1/responses/" + n["id"].get<std::string>()).status == 404);
    }
}

TEST_CASE("api responses: unknown and evicted ids are 404s naming them", "[api][responses]") {
    ApiServer s(ApiServer::default_settings(), {}, qwen3_tokenizer(),
                [](radiance::frontend::ApiContext& c) { c.options.responses_store = 1; });
    const std::string a = s.post("/v1/responses", body()).json_body()["id"];
    const std::string b = s.post("/v1/responses", body()).json_body()["id"];
    CHECK(s.get("/v1/responses/" + b).status == 200);
    for (const std::string& id : {a, std::string("resp_nope")}) {
        const Answer g = s.get("/v1/responses/" + id);
        CHECK(g.status == 404);
        CHECK(g.json_body()["error"]["message"].get<std::string>().find(id) != std::string::npos);
        CHECK(g.json_body()["error"]["param"] == "response_id");
        const Answer p = s.post("/v1/responses", body({{"previous_response_id", id}}));
        CHECK(p.status == 404);
        CHECK(p.json_body()["error"]["message"].get<std::string>().find(id) != std::string::npos);
        CHECK(p.json_body()["error"]["param"] == "previous_response_id");
    }
}

TEST_CASE("api responses: text.format json_schema constrains the output", "[api][responses]") {
    ApiServer s(says("{\"a\": 1}"));
    const json format = {{"type", "json_schema"},
                         {"name", "thing"},
                         {"schema", {{"type", "object"}, {"properties", {{"a", {{"type", "integer"}}}}}, {"required", {"a"}}}},
                         {"strict", true}};
    const Answer a = s.post("/v1/responses", body({{"text", {{"format", format}}}}));
    REQUIRE(a.status == 200);
    CHECK(s.service.submitted().back().constraint != nullptr);
    CHECK(a.json_body()["text"]["format"] == format);
    REQUIRE(s.post("/v1/responses", body({{"text", {{"format", {{"type", "text"}}}}}})).status == 200);
    CHECK(s.service.submitted().back().constraint == nullptr);
}

TEST_CASE("api responses: bad input is a 400 naming the field", "[api][responses]") {
    ApiServer s;
    struct Case {
        json fields;
        std::string param;
    };
    const std::vector<Case> cases = {
        {{{"input", nullptr}}, "input"},
        {{{"input", 5}}, "input"},
        {{{"input", json::array()}}, "input"},
        {{{"input", {{{"role", "user"}, {"content", {{{"type", "input_image"}, {"image_url", "x"}}}}}}}}, "input[0].content[0].type"},
        {{{"input", {{{"role", "user"}, {"content", {{{"type", "input_text"}}}}}}}}, "input[0].content[0].text"},
        {{{"input", {"hi"}}}, "input[0]"},
        {{{"input", {{{"type", "reasoning"}, {"summary", json::array()}}}}}, "input[0].type"},
        {{{"input", {{{"role", "robot"}, {"content", "x"}}}}}, "input[0].role"},
        {{{"input", {{{"role", "user"}}}}}, "input[0].content"},
        {{{"input", {{{"type", "function_call"}, {"name", "f"}, {"arguments", "{}"}}}}}, "input[0].call_id"},
        {{{"input", {{{"type", "function_call"}, {"call_id", "c"}, {"name", "f"}, {"arguments", json::object()}}}}}, "input[0].arguments"},
        {{{"input", {{{"type", "function_call_output"}, {"call_id", "c"}}}}}, "input[0].output"},
        {{{"instructions", 5}}, "instructions"},
        {{{"previous_response_id", 5}}, "previous_response_id"},
        {{{"tools", {{{"type", "function"}}}}}, "tools[0].name"},
        {{{"tools", {{{"type", "web_search"}}}}}, "tools[0].type"},
        {{{"tools", {{{"type", "function"}, {"name", "f"}, {"parameters", 5}}}}}, "tools[0].parameters"},
        {{{"tools", {kWeather, kWeather}}}, "tools[1].name"},
        {{{"tool_choice", "sometimes"}, {"tools", {kWeather}}}, "tool_choice"},
        {{{"tool_choice", {{"type", "function"}, {"name", "nope"}}}, {"tools", {kWeather}}}, "tool_choice"},
        {{{"tool_choice", "required"}}, "tool_choice"},
        {{{"text", {{"format", {{"type", "xml"}}}}}}, "text.format.type"},
        {{{"text", {{"format", {{"type", "json_schema"}}}}}}, "text.format.schema"},
        {{{"text", {{"format", {{"type", "json_schema"}, {"schema", {{"type", "integr"}}}}}}}}, "text.format.schema"},
        {{{"max_output_tokens", 0}}, "max_output_tokens"},
        {{{"max_output_tokens", "many"}}, "max_output_tokens"},
        {{{"temperature", -1}}, "temperature"},
        {{{"metadata", "x"}}, "metadata"},
        {{{"store", "yes"}}, "store"},
    };
    for (const auto& c : cases) {
        INFO(c.fields.dump());
        const Answer a = s.post("/v1/responses", body(c.fields));
        CHECK(a.status == 400);
        const json e = json::parse(a.body, nullptr, false);
        REQUIRE(e.is_object());
        CHECK(e["error"]["param"] == c.param);
        CHECK(e["error"]["type"] == "invalid_request_error");
    }
    CHECK(s.service.submitted().empty());
}

TEST_CASE("api responses: a generation failing after the 200 ends the stream with an error event", "[api][responses]") {
    auto settings = ApiServer::default_settings();
    settings.fail_after = 2;
    ApiServer s(settings);
    const auto events = stream_events(s.post("/v1/responses", body({{"stream", true}})));
    REQUIRE(!events.empty());
    CHECK(events.back()["type"] == "error");
    CHECK(events.back()["message"].get<std::string>().find("generation failed") != std::string::npos);
    const Answer a = s.post("/v1/responses", body());
    CHECK(a.status == 500);
    // A failed response is not stored.
    CHECK(s.get("/v1/responses/" + events.front()["response"]["id"].get<std::string>()).status == 404);
}

TEST_CASE("api responses: sampling fields and a named tool_choice reach the request", "[api][responses]") {
    ApiServer s(says(kCall));
    const Answer a = s.post("/v1/responses", body({{"temperature", 0.5},
                                                   {"top_p", 0.9},
                                                   {"seed", 7},
                                                   {"tools", {kWeather}},
                                                   {"tool_choice", {{"type", "function"}, {"name", "get_weather"}}}}));
    REQUIRE(a.status == 200);
    const auto r = s.service.submitted().back();
    CHECK(r.sampling.temperature == 0.5f);
    CHECK(r.sampling.top_p == 0.9f);
    CHECK(r.sampling.seed == 7u);
    CHECK(r.constraint != nullptr);
    const json j = a.json_body();
    CHECK(j["temperature"] == 0.5);
    CHECK(j["tool_choice"] == json{{"type", "function"}, {"name", "get_weather"}});
    REQUIRE(j["output"].size() == 1);
    CHECK(j["output"][0]["name"] == "get_weather");
}

TEST_CASE("api responses: a server of --task embed answers 400, GET still answers", "[api][responses]") {
    ApiServer s(ApiServer::default_settings(), {}, qwen3_tokenizer(), [](radiance::frontend::ApiContext& c) {
        c.embeddings = true;
        c.embed_only = true;
    });
    const Answer a = s.post("/v1/responses", body());
    CHECK(a.status == 400);
    CHECK(a.json_body()["error"]["param"] == "model");
    CHECK(s.get("/v1/responses/resp_nope").status == 404);
}
