#include <catch2/catch.hpp>

#include "api_test_util.h"

using namespace api_test;

namespace {

json chat(json extra = json::object()) {
    json b = {{"model", "fake-model"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
    b.update(extra);
    return b;
}

// An OpenAI error: the status, the shape, and the field it names.
void check_error(const Answer& a, int status, const json& param) {
    INFO(a.body);
    CHECK(a.status == status);
    json j = a.json_body();
    REQUIRE(j.contains("error"));
    CHECK(j["error"]["message"].is_string());
    CHECK(!j["error"]["message"].get<std::string>().empty());
    CHECK(j["error"]["type"].is_string());
    CHECK(j["error"].contains("code"));
    CHECK(j["error"]["param"] == param);
}

}  // namespace

TEST_CASE("api errors: bodies that are not JSON objects", "[api]") {
    ApiServer s;
    for (const char* body : {"", "{", "nope", "[1,2]", "42", "{\"a\":}", "\"str\""})
        check_error(s.post("/v1/chat/completions", std::string(body)), 400, nullptr);
    std::string deep(100, '[');
    check_error(s.post("/v1/completions", "{\"prompt\":" + deep), 400, "prompt");  // the field the nesting is under
}

TEST_CASE("api errors: wrong types and ranges name the field", "[api]") {
    ApiServer s;
    check_error(s.post("/v1/chat/completions", chat({{"temperature", "hot"}})), 400, "temperature");
    check_error(s.post("/v1/chat/completions", chat({{"temperature", 3}})), 400, "temperature");
    check_error(s.post("/v1/chat/completions", chat({{"top_p", -0.1}})), 400, "top_p");
    check_error(s.post("/v1/chat/completions", chat({{"n", 0}})), 400, "n");
    check_error(s.post("/v1/chat/completions", chat({{"n", 1.5}})), 400, "n");
    check_error(s.post("/v1/chat/completions", chat({{"stream", "yes"}})), 400, "stream");
    check_error(s.post("/v1/chat/completions", chat({{"stop", 5}})), 400, "stop");
    check_error(s.post("/v1/chat/completions", chat({{"stop", {"a", 1}}})), 400, "stop");
    check_error(s.post("/v1/chat/completions", chat({{"seed", "x"}})), 400, "seed");
    check_error(s.post("/v1/chat/completions", chat({{"top_logprobs", 2}})), 400, "top_logprobs");
    check_error(s.post("/v1/chat/completions", chat({{"logprobs", true}, {"top_logprobs", 21}})), 400, "top_logprobs");
    check_error(s.post("/v1/chat/completions", chat({{"repetition_penalty", 0}})), 400, "repetition_penalty");
    check_error(s.post("/v1/chat/completions", chat({{"stream_options", 1}})), 400, "stream_options");
    check_error(s.post("/v1/chat/completions", chat({{"response_format", {{"type", "yaml"}}}})), 400, "response_format.type");
    check_error(s.post("/v1/chat/completions", chat({{"messages", "Hi"}})), 400, "messages");
    check_error(s.post("/v1/chat/completions", chat({{"messages", {{{"content", "Hi"}}}}})), 400, "messages[0].role");
    // An unknown role (it was served as an assistant turn); mutation run: the role check removed
    // answers 200.
    check_error(s.post("/v1/chat/completions",
                       chat({{"messages", {{{"role", "user"}, {"content", "Hi"}}, {{"role", "wizard"}, {"content", "Hi"}}}}})),
                400, "messages[1].role");
    check_error(s.post("/v1/chat/completions", chat({{"messages", {{{"role", "user"}, {"content", 3}}}}})), 400, "messages[0].content");
    check_error(s.post("/v1/chat/completions", chat({{"messages", {{{"role", "user"}, {"content", {{{"type", "image_url"}}}}}}}})), 400,
                "messages[0].content[0].type");
    json no_messages = chat();
    no_messages.erase("messages");
    check_error(s.post("/v1/chat/completions", no_messages), 400, "messages");
}

// cache_salt (vLLM's): a non-empty string on both OpenAI routes; anything else is a 400 naming it.
TEST_CASE("api errors: cache_salt of the wrong type or empty", "[api]") {
    ApiServer s;
    for (const json& bad : {json(5), json(true), json::array({"a"}), json::object({{"a", 1}}), json("")}) {
        INFO(bad.dump());
        check_error(s.post("/v1/chat/completions", chat({{"cache_salt", bad}})), 400, "cache_salt");
        check_error(s.post("/v1/completions", json{{"prompt", "x"}, {"cache_salt", bad}}), 400, "cache_salt");
    }
    check_error(s.post("/v1/completions", json{{"prompt", "x"}, {"cache_salt", std::string(1025, 's')}}), 400, "cache_salt");
    CHECK(s.post("/v1/completions", json{{"prompt", "x"}, {"cache_salt", nullptr}}).status == 200);
}

TEST_CASE("api errors: empty messages, unknown model", "[api]") {
    ApiServer s;
    check_error(s.post("/v1/chat/completions", chat({{"messages", json::array()}})), 400, "messages");
    Answer a = s.post("/v1/chat/completions", chat({{"model", "gpt-9"}}));
    check_error(a, 404, "model");
    CHECK(a.json_body()["error"]["code"] == "model_not_found");
    check_error(s.post("/v1/completions", json{{"model", "gpt-9"}, {"prompt", "x"}}), 404, "model");
}

TEST_CASE("api errors: prompts and max_tokens that do not fit the context", "[api]") {
    auto settings = ApiServer::default_settings();
    settings.info.context_length = 32;
    ApiServer s(settings);
    check_error(s.post("/v1/chat/completions", chat({{"messages", {{{"role", "user"}, {"content", std::string(400, 'x') + " y z"}}}}})),
                400, "messages");
    check_error(s.post("/v1/completions", json{{"prompt", std::vector<int>(32, 5)}}), 400, "prompt");
    check_error(s.post("/v1/chat/completions", chat({{"max_tokens", 30}})), 400, "max_tokens");
    check_error(s.post("/v1/chat/completions", chat({{"max_completion_tokens", 30}})), 400, "max_completion_tokens");
    check_error(s.post("/v1/chat/completions", chat({{"max_tokens", 0}})), 400, "max_tokens");
    CHECK(s.post("/v1/chat/completions", chat({{"max_tokens", 5}})).status == 200);
}

TEST_CASE("api errors: logit_bias ids outside the vocabulary", "[api]") {
    ApiServer s;
    check_error(s.post("/v1/chat/completions", chat({{"logit_bias", {{"151936", 1}}}})), 400, "logit_bias");
    check_error(s.post("/v1/chat/completions", chat({{"logit_bias", {{"-1", 1}}}})), 400, "logit_bias");
    check_error(s.post("/v1/chat/completions", chat({{"logit_bias", {{"abc", 1}}}})), 400, "logit_bias");
    check_error(s.post("/v1/chat/completions", chat({{"logit_bias", {{"12", 101}}}})), 400, "logit_bias");
    check_error(s.post("/v1/chat/completions", chat({{"logit_bias", {1, 2}}})), 400, "logit_bias");
    check_error(s.post("/completion", json{{"prompt", "x"}, {"logit_bias", {{999999, 1}}}}), 400, "logit_bias");
}

TEST_CASE("api errors: service refusals map to 429, 503 and 400", "[api]") {
    ApiServer s;
    auto settings = ApiServer::default_settings();
    settings.refusal = FakeGenerationService::Refusal::QueueFull;
    s.service.set(settings);
    check_error(s.post("/v1/chat/completions", chat()), 429, nullptr);
    check_error(s.post("/v1/chat/completions", chat({{"stream", true}})), 429, nullptr);
    settings.refusal = FakeGenerationService::Refusal::NotReady;
    s.service.set(settings);
    Answer a = s.post("/v1/completions", json{{"prompt", "x"}});
    check_error(a, 503, nullptr);
    CHECK(a.headers["Retry-After"] == "1");
    settings.refusal = FakeGenerationService::Refusal::BadRequest;
    s.service.set(settings);
    check_error(s.post("/completion", json{{"prompt", "x"}}), 400, "prompt");
}

TEST_CASE("api errors: a failing generation", "[api]") {
    auto settings = ApiServer::default_settings();
    settings.fail_after = 3;
    ApiServer s(settings);
    check_error(s.post("/v1/chat/completions", chat()), 500, nullptr);
    Answer st = s.post("/v1/chat/completions", chat({{"stream", true}}));
    CHECK(st.status == 200);  // the stream had started
    auto events = parse_sse(st.body);
    REQUIRE(events.size() >= 2);
    CHECK(events.back().data == "[DONE]");
    CHECK(json::parse(events[events.size() - 2].data)["error"]["message"].get<std::string>().find("rank") != std::string::npos);
}

TEST_CASE("api errors: unknown routes and methods", "[api]") {
    ApiServer s;
    check_error(s.get("/v1/nothing"), 404, nullptr);
    check_error(s.get("/v1/chat/completions"), 405, nullptr);
}

TEST_CASE("api errors: a missing chat template", "[api]") {
    ApiServer s;
    s.ctx.chat_template.clear();
    radiance::frontend::HttpServer bare({});
    radiance::frontend::register_api_routes(bare, s.ctx);
    radiance::frontend::Request req{radiance::frontend::http::verb::post, "/v1/chat/completions", 11};
    req.body() = chat().dump();
    auto reply = bare.handle(req);
    REQUIRE(reply.kind == radiance::frontend::Reply::Kind::Immediate);
    CHECK(reply.response.result_int() == 400);
}
