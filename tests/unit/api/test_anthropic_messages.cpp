#include <catch2/catch.hpp>

#include "api_test_util.h"

using namespace api_test;

namespace {

const std::string kScript = "Hello world! How are you today?";

json messages_body(json extra = json::object()) {
    json b = {{"model", "fake-model"}, {"max_tokens", 100}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
    b.update(extra);
    return b;
}

void check_anthropic_error(const Answer& a, int status, const std::string& type) {
    CHECK(a.status == status);
    json j = a.json_body();
    CHECK(j["type"] == "error");
    CHECK(j["error"]["type"] == type);
    CHECK(j["error"]["message"].is_string());
}

}  // namespace

TEST_CASE("api messages: a plain message", "[api]") {
    ApiServer s;
    Answer a = s.post("/v1/messages", messages_body());
    REQUIRE(a.status == 200);
    json j = a.json_body();
    CHECK(j["type"] == "message");
    CHECK(j["role"] == "assistant");
    CHECK(j["id"].get<std::string>().rfind("msg_", 0) == 0);
    CHECK(j["content"] == json::array({{{"type", "text"}, {"text", kScript}}}));
    CHECK(j["stop_reason"] == "end_turn");
    CHECK(j["stop_sequence"].is_null());
    CHECK(j["usage"]["input_tokens"] == s.service.submitted().back().prompt.size());
    CHECK(j["usage"]["output_tokens"] == encode(kScript).size() + 1);
}

TEST_CASE("api messages: system prompts and text blocks", "[api]") {
    ApiServer s;
    json body = messages_body({{"system", {{{"type", "text"}, {"text", "Be kind."}}}},
                               {"messages", {{{"role", "user"}, {"content", {{{"type", "text"}, {"text", "Hi"}}}}}}}});
    REQUIRE(s.post("/v1/messages", body).status == 200);
    const std::string prompt = qwen3_tokenizer().decode(s.service.submitted().back().prompt);
    CHECK(prompt.rfind("<|im_start|>system\nBe kind.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", 0) == 0);
    body["system"] = "Be kind.";
    REQUIRE(s.post("/v1/messages", body).status == 200);
    CHECK(qwen3_tokenizer().decode(s.service.submitted().back().prompt) == prompt);
}

TEST_CASE("api messages: the streamed events the SDK expects", "[api]") {
    ApiServer s;
    Answer a = s.post("/v1/messages", messages_body({{"stream", true}}));
    REQUIRE(a.status == 200);
    auto events = parse_sse(a.body);
    std::vector<std::string> names;
    std::string text;
    for (const auto& ev : events) {
        json d = json::parse(ev.data);
        CHECK(d["type"] == ev.event);  // every event's data names its type
        if (names.empty() || names.back() != ev.event) names.push_back(ev.event);
        if (ev.event == "content_block_delta") {
            CHECK(d["delta"]["type"] == "text_delta");
            text += d["delta"]["text"].get<std::string>();
        }
    }
    CHECK(names == std::vector<std::string>{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_stop",
                                            "message_delta", "message_stop"});
    CHECK(text == kScript);
    json start = json::parse(events[0].data)["message"];
    CHECK(start["usage"]["input_tokens"] == s.service.submitted().back().prompt.size());
    json delta = json::parse(events[events.size() - 2].data);
    CHECK(delta["delta"]["stop_reason"] == "end_turn");
    CHECK(delta["usage"]["output_tokens"] == encode(kScript).size() + 1);
}

TEST_CASE("api messages: max_tokens and stop_sequences", "[api]") {
    ApiServer s;
    json j = s.post("/v1/messages", messages_body({{"max_tokens", 2}})).json_body();
    CHECK(j["stop_reason"] == "max_tokens");
    CHECK(j["usage"]["output_tokens"] == 2);
    j = s.post("/v1/messages", messages_body({{"stop_sequences", {"are you"}}})).json_body();
    CHECK(j["stop_reason"] == "stop_sequence");
    CHECK(j["stop_sequence"] == "are you");
    CHECK(j["content"][0]["text"] == "Hello world! How ");
    Answer st = s.post("/v1/messages", messages_body({{"stop_sequences", {"are you"}}, {"stream", true}}));
    auto events = parse_sse(st.body);
    json delta = json::parse(events[events.size() - 2].data);
    CHECK(delta["delta"]["stop_reason"] == "stop_sequence");
    CHECK(delta["delta"]["stop_sequence"] == "are you");
}

TEST_CASE("api messages: a generous max_tokens is capped to the context", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/messages", messages_body({{"max_tokens", 1000000}})).status == 200);
    const auto req = s.service.submitted().back();
    CHECK(req.max_tokens == 4096 - static_cast<int>(req.prompt.size()));
}

TEST_CASE("api messages: sampling fields", "[api]") {
    ApiServer s;
    REQUIRE(s.post("/v1/messages", messages_body({{"temperature", 0.2}, {"top_p", 0.8}, {"top_k", 5}})).status == 200);
    const auto p = s.service.submitted().back().sampling;
    CHECK(p.temperature == 0.2f);
    CHECK(p.top_p == 0.8f);
    CHECK(p.top_k == 5);
}

TEST_CASE("api messages: an assistant prefill is continued", "[api]") {
    ApiServer s;
    json body = messages_body({{"messages", {{{"role", "user"}, {"content", "Hi"}}, {{"role", "assistant"}, {"content", "Sure,"}}}}});
    REQUIRE(s.post("/v1/messages", body).status == 200);
    const std::string prompt = qwen3_tokenizer().decode(s.service.submitted().back().prompt);
    CHECK(prompt.substr(prompt.size() - 5) == "Sure,");
}

TEST_CASE("api messages: errors in Anthropic's shape", "[api]") {
    ApiServer s;
    json no_max = messages_body();
    no_max.erase("max_tokens");
    check_anthropic_error(s.post("/v1/messages", no_max), 400, "invalid_request_error");
    check_anthropic_error(s.post("/v1/messages", messages_body({{"model", "claude-9"}})), 404, "not_found_error");
    check_anthropic_error(s.post("/v1/messages", messages_body({{"temperature", 1.5}})), 400, "invalid_request_error");
    check_anthropic_error(s.post("/v1/messages", messages_body({{"messages", json::array()}})), 400, "invalid_request_error");
    check_anthropic_error(s.post("/v1/messages", messages_body({{"messages", {{{"role", "user"}, {"content", {{{"type", "image"}}}}}}}})),
                          400, "invalid_request_error");
    check_anthropic_error(s.post("/v1/messages", messages_body({{"messages", {{{"role", "system"}, {"content", "x"}}}}})), 400,
                          "invalid_request_error");
    check_anthropic_error(s.post("/v1/messages", std::string("{not json")), 400, "invalid_request_error");
    check_anthropic_error(s.get("/v1/messages"), 405, "invalid_request_error");

    auto settings = ApiServer::default_settings();
    settings.refusal = FakeGenerationService::Refusal::QueueFull;
    s.service.set(settings);
    check_anthropic_error(s.post("/v1/messages", messages_body()), 429, "rate_limit_error");
    settings.refusal = FakeGenerationService::Refusal::NotReady;
    s.service.set(settings);
    Answer busy = s.post("/v1/messages", messages_body());
    check_anthropic_error(busy, 503, "overloaded_error");
    CHECK(busy.headers.count("Retry-After") == 1);
}
