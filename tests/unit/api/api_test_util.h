// api_test_util.h: an in-process API server (the routes on an HttpServer that never opens a
// socket) over the fake GenerationService and the real Qwen3 tokenizer and chat template, and
// helpers to call it and read its answers.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api_routes.h"
#include "fake_generation_service.h"

namespace api_test {

using json = nlohmann::json;

const radiance::text::Tokenizer& qwen3_tokenizer();
const radiance::text::Tokenizer& mistral_tokenizer();  // SentencePiece-style, with byte fallback
const std::string& qwen3_chat_template();
std::vector<int32_t> encode(const std::string& text);  // no special tokens
int32_t token_id(const std::string& token);            // a special token's id

struct Answer {
    int status = 0;
    std::map<std::string, std::string> headers;
    std::string body;
    bool finished = true;  // a deferred or streamed reply completed in time
    json json_body() const { return json::parse(body); }
};

struct SseEvent {
    std::string event;  // empty when the event has no name
    std::string data;
};
std::vector<SseEvent> parse_sse(const std::string& body);

class ApiServer {
public:
    explicit ApiServer(FakeGenerationService::Settings settings = default_settings(), radiance::frontend::HttpOptions http = {},
                       const radiance::text::Tokenizer& tokenizer = qwen3_tokenizer(),
                       std::function<void(radiance::frontend::ApiContext&)> configure = {});
    static FakeGenerationService::Settings default_settings();  // the script "Hello world! How are you today?"

    Answer post(const std::string& target, const std::string& body, const std::map<std::string, std::string>& headers = {});
    Answer post(const std::string& target, const json& body) { return post(target, body.dump()); }
    Answer get(const std::string& target, const std::map<std::string, std::string>& headers = {});
    Answer call(radiance::frontend::http::verb verb, const std::string& target, const std::string& body,
                const std::map<std::string, std::string>& headers);

    FakeGenerationService service;
    radiance::frontend::ApiContext ctx;
    radiance::frontend::HttpServer server;
};

// Concatenated OpenAI chat deltas (per choice index) of a stream.
std::map<int, std::string> chat_stream_text(const std::string& body);

}  // namespace api_test
