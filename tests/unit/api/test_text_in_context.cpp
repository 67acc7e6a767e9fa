// Generated text continues the prompt's text, on a SentencePiece vocabulary (Mistral's, with
// byte fallback) where a word-start "▁" is a space only in mid-text: "▁than" after "Call me"
// is " than", while on its own it decodes as "than". Logprobs' tokens, bytes and offsets are
// the same text cut per token. The tokenizer tests check the decoder against Hugging Face;
// these check that every API path uses it in context.
//
// Mutations that fail it: the job's decoder built without the prompt (texts "than than than",
// echo "Call methan than than"); logprobs' bytes from the token's own decode (a byte token's
// bytes become U+FFFD); text_offset counting bytes (offsets after "🐳" grow by 4, not 1);
// /tokenize pieces from a plain decode ("Call" without its space).
#include <catch2/catch.hpp>

#include "api_test_util.h"
#include "openai_logprobs.h"

using namespace api_test;

namespace {

std::string completion_stream_text(const std::string& body) {
    std::string text;
    for (const auto& ev : parse_sse(body))
        if (ev.data != "[DONE]") text += json::parse(ev.data)["choices"][0]["text"].get<std::string>();
    return text;
}

ApiServer server_generating(const std::string& text) {
    FakeGenerationService::Settings set;
    set.script = mistral_tokenizer().encode(text, false);
    return ApiServer(set, {}, mistral_tokenizer());
}

}  // namespace

TEST_CASE("api text in context: completions, echo, streams and llama /completion", "[api]") {
    ApiServer s = server_generating("than than than");
    const json body = {{"prompt", "Call me"}, {"max_tokens", 3}};
    CHECK(s.post("/v1/completions", body).json_body()["choices"][0]["text"] == " than than than");
    json echo = body;
    echo["echo"] = true;
    CHECK(s.post("/v1/completions", echo).json_body()["choices"][0]["text"] == "Call me than than than");
    json streamed = body;
    streamed["stream"] = true;
    CHECK(completion_stream_text(s.post("/v1/completions", streamed).body) == " than than than");
    CHECK(s.post("/completion", json{{"prompt", "Call me"}, {"n_predict", 3}}).json_body()["content"] == " than than than");
    // Token-id prompts too: the context is the ids.
    json ids = body;
    ids["prompt"] = mistral_tokenizer().encode("Call me", true);
    CHECK(s.post("/v1/completions", ids).json_body()["choices"][0]["text"] == " than than than");
}

TEST_CASE("api text in context: logprobs tokens, bytes and offsets are the text cut per token", "[api]") {
    // "🐳" has no token of its own: four byte-fallback tokens spell it.
    const std::string script = "a🐳 café than";
    const auto ids = mistral_tokenizer().encode(script, false);
    REQUIRE(ids.size() >= 6);
    ApiServer s = server_generating(script);

    json c = s.post("/v1/completions", json{{"prompt", "Call me"}, {"max_tokens", 64}, {"logprobs", 2}}).json_body();
    const std::string text = c["choices"][0]["text"];
    CHECK(text == " " + script);
    const json& lp = c["choices"][0]["logprobs"];
    REQUIRE(lp["tokens"].size() == ids.size());
    std::string joined;
    size_t chars = 0;
    for (size_t i = 0; i < ids.size(); ++i) {
        INFO("token " << i);
        CHECK(lp["text_offset"][i] == chars);
        const std::string t = lp["tokens"][i];
        joined += t;
        chars += radiance::frontend::code_points(t);
    }
    CHECK(joined == text);
    CHECK(lp["text_offset"].back() == radiance::frontend::code_points(text) - radiance::frontend::code_points(" than"));

    json chat =
        s.post("/v1/chat/completions", json{{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"logprobs", true}, {"top_logprobs", 1}})
            .json_body();
    const std::string content = chat["choices"][0]["message"]["content"];
    std::string texts, bytes;
    for (const auto& e : chat["choices"][0]["logprobs"]["content"]) {
        texts += e["token"].get<std::string>();
        for (int b : e["bytes"]) bytes.push_back(static_cast<char>(b));
        REQUIRE(e["top_logprobs"].size() == 1);
    }
    CHECK(texts == content);
    CHECK(bytes == content);
}

TEST_CASE("api text in context: /tokenize pieces as llama-server shows them", "[api]") {
    ApiServer s = server_generating("x");
    json p = s.post("/tokenize", json{{"content", "Call me 🐳"}, {"with_pieces", true}}).json_body();
    const json& t = p["tokens"];
    REQUIRE(t.size() >= 6);
    CHECK(t[0]["piece"] == " Call");
    CHECK(t[1]["piece"] == " me");
    // The emoji's byte tokens are not whole characters: their pieces are byte arrays.
    CHECK(t[t.size() - 4]["piece"] == json::array({0xF0}));
    CHECK(t.back()["piece"] == json::array({0xB3}));
}
