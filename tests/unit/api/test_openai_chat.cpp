#include <catch2/catch.hpp>

#include "api_test_util.h"
#include "radiance/jinja/chat_template.h"

using namespace api_test;

namespace {

const std::string kScript = "Hello world! How are you today?";

json chat_body(json extra = json::object()) {
    json b = {{"model", "fake-model"}, {"messages", {{{"role", "user"}, {"content", "Hi there"}}}}};
    b.update(extra);
    return b;
}

// The prompt the Qwen3 template makes of the body's messages (what transformers would send).
std::vector<int32_t> expected_prompt(const json& messages) {
    const std::string text = radiance::jinja::render_chat_template(
        qwen3_chat_template(),
        json{{"messages", messages}, {"add_generation_prompt", true}, {"eos_token", "<|im_end|>"}, {"bos_token", ""}});
    return encode(text);
}

}  // namespace

TEST_CASE("api chat: a plain completion", "[api]") {
    ApiServer s;
    Answer a = s.post("/v1/chat/completions", chat_body());
    REQUIRE(a.status == 200);
    json j = a.json_body();
    CHECK(j["object"] == "chat.completion");
    CHECK(j["model"] == "fake-model");
    CHECK(j["id"].get<std::string>().rfind("chatcmpl-", 0) == 0);
    REQUIRE(j["choices"].size() == 1);
    CHECK(j["choices"][0]["index"] == 0);
    CHECK(j["choices"][0]["message"]["role"] == "assistant");
    CHECK(j["choices"][0]["message"]["content"] == kScript);
    CHECK(j["choices"][0]["finish_reason"] == "stop");
    CHECK(j["choices"][0]["logprobs"].is_null());

    auto sub = s.service.submitted();
    REQUIRE(sub.size() == 1);
    CHECK(sub[0].prompt == expected_prompt(chat_body()["messages"]));
    CHECK(std::find(sub[0].stop_token_ids.begin(), sub[0].stop_token_ids.end(), token_id("<|im_end|>")) != sub[0].stop_token_ids.end());
    CHECK(j["usage"]["prompt_tokens"] == sub[0].prompt.size());
    CHECK(j["usage"]["completion_tokens"] == encode(kScript).size() + 1);  // and the EOS
    CHECK(j["usage"]["total_tokens"] == sub[0].prompt.size() + encode(kScript).size() + 1);
    CHECK(sub[0].cache_salt.empty());
}

TEST_CASE("api chat: cache_salt reaches every choice", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/chat/completions", chat_body({{"cache_salt", "tenant-7"}, {"n", 2}})).status == 200);
    auto sub = s.service.submitted();
    REQUIRE(sub.size() == 2);
    for (const auto& r : sub) CHECK(r.cache_salt == "tenant-7");
}

TEST_CASE("api chat: streaming gives the same text as chunks ending with [DONE]", "[api]") {
    ApiServer s;
    const std::string whole = s.post("/v1/chat/completions", chat_body()).json_body()["choices"][0]["message"]["content"];
    Answer a = s.post("/v1/chat/completions", chat_body({{"stream", true}}));
    REQUIRE(a.status == 200);
    CHECK(a.headers["Content-Type"] == "text/event-stream");
    auto events = parse_sse(a.body);
    REQUIRE(events.size() >= 3);
    CHECK(events.back().data == "[DONE]");
    json first = json::parse(events.front().data);
    CHECK(first["object"] == "chat.completion.chunk");
    CHECK(first["choices"][0]["delta"]["role"] == "assistant");
    json last = json::parse(events[events.size() - 2].data);
    CHECK(last["choices"][0]["finish_reason"] == "stop");
    CHECK(last["choices"][0]["delta"].empty());
    CHECK(chat_stream_text(a.body)[0] == whole);
    // One id for the whole stream.
    for (size_t i = 0; i + 1 < events.size(); ++i) CHECK(json::parse(events[i].data)["id"] == first["id"]);
}

TEST_CASE("api chat: stream_options.include_usage adds a usage chunk", "[api]") {
    ApiServer s;
    Answer a = s.post("/v1/chat/completions", chat_body({{"stream", true}, {"stream_options", {{"include_usage", true}}}}));
    auto events = parse_sse(a.body);
    REQUIRE(events.size() >= 3);
    json usage_chunk = json::parse(events[events.size() - 2].data);
    CHECK(usage_chunk["choices"].empty());
    CHECK(usage_chunk["usage"]["completion_tokens"] == encode(kScript).size() + 1);
    CHECK(json::parse(events[0].data)["usage"].is_null());
}

TEST_CASE("api chat: max_tokens ends with finish_reason length", "[api]") {
    ApiServer s;
    for (const char* field : {"max_tokens", "max_completion_tokens"}) {
        json j = s.post("/v1/chat/completions", chat_body({{field, 3}})).json_body();
        auto ids = encode(kScript);
        CHECK(j["choices"][0]["message"]["content"] == qwen3_tokenizer().decode(std::vector<int32_t>(ids.begin(), ids.begin() + 3)));
        CHECK(j["choices"][0]["finish_reason"] == "length");
        CHECK(j["usage"]["completion_tokens"] == 3);
        CHECK(s.service.submitted().back().max_tokens == 3);
    }
}

TEST_CASE("api chat: stop strings split across tokens never leak", "[api]") {
    ApiServer s;
    // "Hello" and " world" are separate tokens: the stop string spans the boundary.
    REQUIRE(encode("Hello world").size() == 2);
    for (bool stream : {false, true}) {
        for (json stop : {json("lo wor"), json::array({"zzz", "lo wor"})}) {
            CAPTURE(stream, stop);
            Answer a = s.post("/v1/chat/completions", chat_body({{"stop", stop}, {"stream", stream}}));
            REQUIRE(a.status == 200);
            if (stream) {
                CHECK(chat_stream_text(a.body)[0] == "Hel");
                auto events = parse_sse(a.body);
                CHECK(json::parse(events[events.size() - 2].data)["choices"][0]["finish_reason"] == "stop");
            } else {
                CHECK(a.json_body()["choices"][0]["message"]["content"] == "Hel");
                CHECK(a.json_body()["choices"][0]["finish_reason"] == "stop");
            }
        }
    }
}

TEST_CASE("api chat: a stop string cancels the generation behind it", "[api]") {
    auto settings = ApiServer::default_settings();
    settings.tokens_per_call = 1;
    settings.tick = std::chrono::milliseconds(2);
    ApiServer s(settings);
    Answer a = s.post("/v1/chat/completions", chat_body({{"stop", "lo wor"}, {"ignore_eos", true}, {"max_tokens", 2000}}));
    CHECK(a.json_body()["choices"][0]["message"]["content"] == "Hel");
    CHECK(a.json_body()["usage"]["completion_tokens"] == 2);  // what came after the stop is not counted
    CHECK(s.service.cancelled().size() == 1);
    CHECK(s.service.wait_idle(std::chrono::seconds(2)));  // not 2000 tokens later
}

TEST_CASE("api chat: a stop string that only starts to match is returned whole", "[api]") {
    ApiServer s;
    Answer a = s.post("/v1/chat/completions", chat_body({{"stop", {"world?", "today!"}}, {"stream", true}}));
    CHECK(chat_stream_text(a.body)[0] == kScript);
}

TEST_CASE("api chat: stream deltas hold back a possible stop string until resolved", "[api]") {
    FakeGenerationService::Settings settings = ApiServer::default_settings();
    settings.tokens_per_call = 1;
    ApiServer s(settings);
    Answer a = s.post("/v1/chat/completions", chat_body({{"stop", "How are"}, {"stream", true}}));
    for (const auto& ev : parse_sse(a.body)) {
        if (ev.data == "[DONE]") continue;
        CHECK(ev.data.find("How") == std::string::npos);
    }
    CHECK(chat_stream_text(a.body)[0] == "Hello world! ");
}

TEST_CASE("api chat: n > 1 makes independent choices with their own seeds", "[api]") {
    ApiServer s;
    json j = s.post("/v1/chat/completions", chat_body({{"n", 3}, {"seed", 42}})).json_body();
    REQUIRE(j["choices"].size() == 3);
    for (int i = 0; i < 3; ++i) {
        CHECK(j["choices"][i]["index"] == i);
        CHECK(j["choices"][i]["message"]["content"] == kScript);
    }
    CHECK(j["usage"]["completion_tokens"] == 3 * (encode(kScript).size() + 1));
    auto sub = s.service.submitted();
    REQUIRE(sub.size() == 3);
    CHECK(sub[0].sampling.seed == 42u);
    CHECK(sub[1].sampling.seed != sub[0].sampling.seed);
    CHECK(sub[2].sampling.seed != sub[1].sampling.seed);

    Answer st = s.post("/v1/chat/completions", chat_body({{"n", 2}, {"stream", true}}));
    auto text = chat_stream_text(st.body);
    CHECK(text[0] == kScript);
    CHECK(text[1] == kScript);
}

TEST_CASE("api chat: sampling fields reach the GenerationRequest", "[api]") {
    ApiServer s;
    Answer a = s.post("/v1/chat/completions", chat_body({{"temperature", 0.5},
                                                         {"top_p", 0.9},
                                                         {"top_k", 40},
                                                         {"min_p", 0.05},
                                                         {"presence_penalty", 0.5},
                                                         {"frequency_penalty", -0.5},
                                                         {"repetition_penalty", 1.1},
                                                         {"logit_bias", {{"100", 5}, {"7", -100}}},
                                                         {"seed", -1}}));
    REQUIRE(a.status == 200);
    const auto p = s.service.submitted().back().sampling;
    CHECK(p.temperature == 0.5f);
    CHECK(p.top_p == 0.9f);
    CHECK(p.top_k == 40);
    CHECK(p.min_p == 0.05f);
    CHECK(p.presence_penalty == 0.5f);
    CHECK(p.frequency_penalty == -0.5f);
    CHECK(p.repetition_penalty == 1.1f);
    CHECK(p.seed == ~uint64_t{0});
    CHECK(p.top_logprobs == -1);
    REQUIRE(p.logit_bias.size() == 2);
    CHECK(p.logit_bias[0] == std::pair<int32_t, float>{100, 5.0f});
    CHECK(p.logit_bias[1] == std::pair<int32_t, float>{7, -100.0f});
}

TEST_CASE("api chat: logprobs and top_logprobs", "[api]") {
    ApiServer s;
    json j = s.post("/v1/chat/completions", chat_body({{"logprobs", true}, {"top_logprobs", 2}})).json_body();
    CHECK(s.service.submitted().back().sampling.top_logprobs == 2);
    const auto& content = j["choices"][0]["logprobs"]["content"];
    const auto ids = encode(kScript);
    REQUIRE(content.size() == ids.size());  // the EOS is not part of the content
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i) {
        text += content[i]["token"].get<std::string>();
        CHECK(content[i]["logprob"].get<double>() == Approx(-0.25 * (i % 4)));
        CHECK(content[i]["top_logprobs"].size() == 2);
        CHECK(content[i]["bytes"].size() == content[i]["token"].get<std::string>().size());
    }
    CHECK(text == kScript);

    // Streamed: the same entries, spread over the chunks.
    Answer st = s.post("/v1/chat/completions", chat_body({{"logprobs", true}, {"stream", true}}));
    size_t streamed = 0;
    for (const auto& ev : parse_sse(st.body)) {
        if (ev.data == "[DONE]") continue;
        const json c = json::parse(ev.data)["choices"][0];
        if (c["logprobs"].is_object()) streamed += c["logprobs"]["content"].size();
    }
    CHECK(streamed == ids.size());
    CHECK(s.service.submitted().back().sampling.top_logprobs == 0);
}

TEST_CASE("api chat: system, developer, tool roles and tool_calls reach the template", "[api]") {
    ApiServer s;
    json messages = json::array(
        {{{"role", "developer"}, {"content", "Be brief."}},
         {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "Weather"}}, {{"type", "text"}, {"text", "in Paris?"}}}}},
         {{"role", "assistant"},
          {"content", nullptr},
          {"tool_calls",
           {{{"id", "call_1"}, {"type", "function"}, {"function", {{"name", "get_weather"}, {"arguments", R"({"city": "Paris"})"}}}}}}},
         {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", "sunny"}}});
    json tools = {{{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}}};
    Answer a = s.post("/v1/chat/completions", chat_body({{"messages", messages}, {"tools", tools}}));
    INFO(a.body);
    REQUIRE(a.status == 200);
    const std::string prompt = qwen3_tokenizer().decode(s.service.submitted().back().prompt);
    CHECK(prompt.find("<|im_start|>system\nBe brief.") != std::string::npos);
    CHECK(prompt.find("Weather\nin Paris?") != std::string::npos);
    CHECK(prompt.find(R"({"name": "get_weather", "arguments": {"city": "Paris"}})") != std::string::npos);
    CHECK(prompt.find("<tool_response>\nsunny\n</tool_response>") != std::string::npos);
    CHECK(prompt.find("\"name\": \"get_weather\"") != std::string::npos);  // the tools block
}

TEST_CASE("api chat: chat_template_kwargs reach the template", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/chat/completions", chat_body({{"chat_template_kwargs", {{"enable_thinking", false}}}})).status == 200);
    const std::string prompt = qwen3_tokenizer().decode(s.service.submitted().back().prompt);
    CHECK(prompt.size() >= 19);
    CHECK(prompt.substr(prompt.size() - 19) == "<think>\n\n</think>\n\n");
}

TEST_CASE("api chat: ignore_eos runs to max_tokens", "[api]") {
    ApiServer s;
    json j = s.post("/v1/chat/completions", chat_body({{"ignore_eos", true}, {"max_tokens", 20}})).json_body();
    CHECK(s.service.submitted().back().stop_token_ids.empty());
    CHECK(j["choices"][0]["finish_reason"] == "length");
    CHECK(j["usage"]["completion_tokens"] == 20);
}

TEST_CASE("api chat: a missing model name is fine, max_tokens defaults to what fits", "[api]") {
    FakeGenerationService::Settings settings = ApiServer::default_settings();
    settings.info.context_length = 100;
    ApiServer s(settings);
    json body = chat_body();
    body.erase("model");
    REQUIRE(s.post("/v1/chat/completions", body).status == 200);
    const auto req = s.service.submitted().back();
    CHECK(req.max_tokens == 100 - static_cast<int>(req.prompt.size()));
}
