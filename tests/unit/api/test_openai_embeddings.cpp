// POST /v1/embeddings against the fake service (its vectors are a fixed function of the prompt,
// 8 wide, not normalised): the wire shapes, the API layer's truncation and normalisation, base64,
// and every refusal naming its field.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "api_test_util.h"
#include "embedding_vectors.h"

using namespace api_test;
using radiance::frontend::ApiContext;

namespace {

ApiServer embedding_server(bool embed_only = false) {
    return ApiServer(ApiServer::default_settings(), {}, qwen3_tokenizer(), [embed_only](ApiContext& c) {
        c.embeddings = true;
        c.embed_only = embed_only;
    });
}

std::vector<float> floats(const json& a) {
    std::vector<float> v;
    for (const auto& x : a) v.push_back(x.get<float>());
    return v;
}

double norm(const std::vector<float>& v) {
    double s = 0;
    for (float x : v) s += static_cast<double>(x) * x;
    return std::sqrt(s);
}

// The fake's vector for `ids`, as the API layer should answer it.
std::vector<float> expected(const std::vector<int32_t>& ids, int64_t dims = 0) {
    return radiance::frontend::finish_embedding(FakeGenerationService::fake_embedding(ids, 8), dims, true);
}

std::vector<float> decode_base64(const std::string& s) {
    auto val = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        return c == '+' ? 62 : c == '/' ? 63 : -1;
    };
    std::string bytes;
    uint32_t acc = 0;
    int bits = 0;
    for (char c : s) {
        if (c == '=') break;
        acc = (acc << 6) | static_cast<uint32_t>(val(c));
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            bytes += static_cast<char>((acc >> bits) & 0xff);
        }
    }
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);  // little-endian host
    return v;
}

}  // namespace

TEST_CASE("api embeddings: a string gives one unit vector, the usage and the model", "[api]") {
    ApiServer s = embedding_server();
    Answer a = s.post("/v1/embeddings", json{{"input", "Call me Ishmael."}, {"model", "fake-model"}});
    REQUIRE(a.status == 200);
    json j = a.json_body();
    CHECK(j["object"] == "list");
    CHECK(j["model"] == "fake-model");
    REQUIRE(j["data"].size() == 1);
    CHECK(j["data"][0]["object"] == "embedding");
    CHECK(j["data"][0]["index"] == 0);
    const auto ids = qwen3_tokenizer().encode("Call me Ishmael.", true);
    const std::vector<float> v = floats(j["data"][0]["embedding"]);
    CHECK(v == expected(ids));
    CHECK(std::abs(norm(v) - 1.0) < 1e-6);
    CHECK(j["usage"]["prompt_tokens"] == ids.size());
    CHECK(j["usage"]["total_tokens"] == ids.size());
    const auto req = s.service.submitted().back();
    REQUIRE(req.embed);
    CHECK(*req.embed == radiance::frontend::Pooling::Last);
    CHECK(req.prompt == ids);
}

TEST_CASE("api embeddings: arrays of strings, token ids and arrays of token ids", "[api]") {
    ApiServer s = embedding_server();
    json j = s.post("/v1/embeddings", json{{"input", {"one", "two words"}}}).json_body();
    REQUIRE(j["data"].size() == 2);
    CHECK(j["data"][1]["index"] == 1);
    CHECK(floats(j["data"][1]["embedding"]) == expected(qwen3_tokenizer().encode("two words", true)));
    // token ids are used as given (no special tokens added)
    j = s.post("/v1/embeddings", json{{"input", {5, 6, 7}}}).json_body();
    REQUIRE(j["data"].size() == 1);
    CHECK(floats(j["data"][0]["embedding"]) == expected({5, 6, 7}));
    CHECK(j["usage"]["prompt_tokens"] == 3);
    j = s.post("/v1/embeddings", json{{"input", {{5, 6, 7}, {9}}}}).json_body();
    REQUIRE(j["data"].size() == 2);
    CHECK(floats(j["data"][0]["embedding"]) == expected({5, 6, 7}));
    CHECK(floats(j["data"][1]["embedding"]) == expected({9}));
    CHECK(j["usage"]["total_tokens"] == 4);
}

TEST_CASE("api embeddings: dimensions truncates then normalises, and base64 is the floats' bytes", "[api]") {
    ApiServer s = embedding_server();
    json j = s.post("/v1/embeddings", json{{"input", {5, 6, 7}}, {"dimensions", 3}}).json_body();
    const std::vector<float> v = floats(j["data"][0]["embedding"]);
    REQUIRE(v.size() == 3);
    CHECK(v == expected({5, 6, 7}, 3));
    // Mutation seen failing (2026-12-07): finish_embedding normalising before it truncates (the
    // norm check below; `expected` shares the function, so only the norm tells).
    CHECK(std::abs(norm(v) - 1.0) < 1e-6);
    j = s.post("/v1/embeddings", json{{"input", {5, 6, 7}}, {"encoding_format", "base64"}}).json_body();
    REQUIRE(j["data"][0]["embedding"].is_string());
    CHECK(decode_base64(j["data"][0]["embedding"].get<std::string>()) == expected({5, 6, 7}));
    j = s.post("/v1/embeddings", json{{"input", {5, 6, 7}}, {"encoding_format", "base64"}, {"dimensions", 5}}).json_body();
    CHECK(decode_base64(j["data"][0]["embedding"].get<std::string>()) == expected({5, 6, 7}, 5));
    // the padding cases of base64: 1, 2 and 3 floats are 4, 8 and 12 bytes
    CHECK(radiance::frontend::embedding_base64({1.0f}) == "AACAPw==");
    CHECK(radiance::frontend::embedding_base64({1.0f, -2.0f}) == "AACAPwAAAMA=");
}

TEST_CASE("api embeddings: bad input is a 400 naming the field", "[api]") {
    ApiServer s = embedding_server();
    auto refused = [&](const json& body, const std::string& param) {
        Answer a = s.post("/v1/embeddings", body);
        INFO(body.dump() << " -> " << a.body);
        CHECK(a.status == 400);
        CHECK(a.json_body()["error"]["param"] == param);
        return a.json_body()["error"]["message"].get<std::string>();
    };
    refused(json::object(), "input");
    refused(json{{"input", ""}}, "input");
    refused(json{{"input", json::array()}}, "input");
    refused(json{{"input", {"a", ""}}}, "input[1]");
    refused(json{{"input", {{1, 2}, json::array()}}}, "input[1]");
    refused(json{{"input", {"a", 3}}}, "input[1]");
    refused(json{{"input", 7}}, "input");
    CHECK(refused(json{{"input", {1, 200000}}}, "input").find("200000") != std::string::npos);
    refused(json{{"input", {{1}, {-1}}}}, "input[1]");
    refused(json{{"input", {1, 2}}, {"encoding_format", "int8"}}, "encoding_format");
    CHECK(refused(json{{"input", {1, 2}}, {"dimensions", 9}}, "dimensions").find("8") != std::string::npos);
    refused(json{{"input", {1, 2}}, {"dimensions", 0}}, "dimensions");
    // too long for the context (the fake's is 4096)
    CHECK(refused(json{{"input", std::vector<int>(4097, 1)}}, "input").find("context") != std::string::npos);
    CHECK(refused(json{{"input", std::vector<std::string>(2049, "a")}}, "input").find("2048") != std::string::npos);
    CHECK(s.service.submitted().empty());
    CHECK(s.post("/v1/embeddings", json{{"input", "x"}, {"model", "other"}}).status == 404);
}

TEST_CASE("api embeddings: off without --embeddings, and --task embed refuses generation", "[api]") {
    ApiServer plain;
    Answer a = plain.post("/v1/embeddings", json{{"input", "hello"}});
    CHECK(a.status == 400);
    CHECK(a.json_body()["error"]["message"].get<std::string>().find("--embeddings") != std::string::npos);
    CHECK(plain.post("/v1/completions", json{{"prompt", "hi"}, {"max_tokens", 2}}).status == 200);

    ApiServer embed = embedding_server(true);
    CHECK(embed.post("/v1/embeddings", json{{"input", "hello"}}).status == 200);
    for (const char* path : {"/v1/completions", "/v1/chat/completions", "/completion", "/v1/messages"}) {
        Answer g = embed.post(path, json{{"prompt", "hi"}, {"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 2}});
        INFO(path);
        CHECK(g.status == 400);
        CHECK(g.body.find("--task embed") != std::string::npos);
    }
    // --embeddings: both
    ApiServer both = embedding_server(false);
    CHECK(both.post("/v1/completions", json{{"prompt", "hi"}, {"max_tokens", 2}}).status == 200);
    CHECK(both.post("/v1/embeddings", json{{"input", "hi"}}).status == 200);
}
