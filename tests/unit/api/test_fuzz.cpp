// Random and mutated bodies against every POST endpoint, in-process: each must get a
// well-formed 2xx or 4xx answer, in time, whatever it was sent.
#include <catch2/catch.hpp>

#include <random>

#include "api_test_util.h"

using namespace api_test;

namespace {

const std::vector<std::string> kFields = {"model",
                                          "messages",
                                          "prompt",
                                          "max_tokens",
                                          "max_completion_tokens",
                                          "n",
                                          "stream",
                                          "stream_options",
                                          "stop",
                                          "temperature",
                                          "top_p",
                                          "top_k",
                                          "min_p",
                                          "seed",
                                          "presence_penalty",
                                          "frequency_penalty",
                                          "repetition_penalty",
                                          "logit_bias",
                                          "logprobs",
                                          "top_logprobs",
                                          "echo",
                                          "return_token_ids",
                                          "tools",
                                          "chat_template_kwargs",
                                          "ignore_eos",
                                          "system",
                                          "stop_sequences",
                                          "n_predict",
                                          "repeat_penalty",
                                          "n_probs",
                                          "content",
                                          "tokens",
                                          "with_pieces",
                                          "add_special",
                                          "response_format",
                                          "best_of",
                                          "suffix",
                                          "role",
                                          "text",
                                          "type",
                                          "tool_calls",
                                          "continue_final_message",
                                          "add_generation_prompt",
                                          "return_tokens",
                                          "tool_choice",
                                          "parallel_tool_calls",
                                          "function",
                                          "name",
                                          "parameters",
                                          "input_schema",
                                          "input",
                                          "tool_use_id",
                                          "id"};

class Fuzzer {
public:
    explicit Fuzzer(uint32_t seed) : rng_(seed) {}

    int pick(int n) { return static_cast<int>(rng_() % static_cast<uint32_t>(n)); }

    json random_value(int depth = 0) {
        switch (pick(depth > 2 ? 7 : 9)) {
        case 0: return nullptr;
        case 1: return pick(2) == 0;
        case 2: {
            static const std::vector<int64_t> ints = {0,   1,    -1,   2,      5,      20,        21,        100,       128,
                                                      129, 4095, 4096, 151935, 151936, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};
            return pick(2) ? json(ints[static_cast<size_t>(pick(static_cast<int>(ints.size())))]) : json(pick(300) - 20);
        }
        case 3: return json(std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(pick(3)));
        case 4: {
            static const std::vector<double> reals = {0.0, -0.0, 0.5, 1.0, 1.5, 2.0, -2.5, 1e-300, 1e300, -1e300, 100.5};
            return reals[static_cast<size_t>(pick(static_cast<int>(reals.size())))];
        }
        case 5:
        case 6: return random_string();
        case 7: {
            json a = json::array();
            for (int i = 0, n = pick(5); i < n; ++i) a.push_back(random_value(depth + 1));
            return a;
        }
        default: {
            json o = json::object();
            for (int i = 0, n = pick(4); i < n; ++i)
                o[kFields[static_cast<size_t>(pick(static_cast<int>(kFields.size())))]] = random_value(depth + 1);
            return o;
        }
        }
    }

    std::string random_string() {
        static const std::vector<std::string> words = {"",     "user",       "assistant", "system", "tool",       "developer",
                                                       "text", "fake-model", "Hello",     "lo wor", "<|im_end|>", "\xc3\xa9",
                                                       "{{",   "%}",         "</think>",  "\n",     "function",   "image"};
        if (pick(3)) return words[static_cast<size_t>(pick(static_cast<int>(words.size())))];
        std::string s;
        for (int i = 0, n = pick(40); i < n; ++i) s += static_cast<char>(32 + pick(95));
        return s;
    }

    // Replaces, deletes or inserts somewhere inside v.
    void mutate(json& v, int depth = 0) {
        if (v.is_object() && !v.empty() && pick(3) && depth < 4) {
            auto it = v.begin();
            std::advance(it, pick(static_cast<int>(v.size())));
            if (pick(4) == 0)
                v.erase(it);
            else
                mutate(*it, depth + 1);
            return;
        }
        if (v.is_array() && !v.empty() && pick(3) && depth < 4) {
            const auto i = static_cast<size_t>(pick(static_cast<int>(v.size())));
            if (pick(4) == 0)
                v.erase(i);
            else
                mutate(v[i], depth + 1);
            return;
        }
        if (v.is_object() && pick(2)) {
            v[kFields[static_cast<size_t>(pick(static_cast<int>(kFields.size())))]] = random_value();
            return;
        }
        v = random_value();
    }

    // Byte-level damage to the serialised body.
    void damage(std::string& s) {
        if (s.empty()) return;
        switch (pick(4)) {
        case 0: s.resize(static_cast<size_t>(pick(static_cast<int>(s.size())))); break;
        case 1: s[static_cast<size_t>(pick(static_cast<int>(s.size())))] = static_cast<char>(pick(256)); break;
        case 2: s.insert(static_cast<size_t>(pick(static_cast<int>(s.size()))), std::string(1 + pick(3), "{[\"\\,:]}"[pick(8)])); break;
        default: s += s.substr(0, static_cast<size_t>(pick(static_cast<int>(s.size())))); break;
        }
    }

private:
    std::mt19937 rng_;
};

struct Target {
    std::string path;
    json seed;
    bool anthropic = false;
};

std::vector<Target> targets() {
    const json messages = {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}};
    return {
        {"/v1/chat/completions",
         {{"model", "fake-model"},
          {"messages", messages},
          {"max_tokens", 8},
          {"stream", false},
          {"stop", {"lo wor"}},
          {"temperature", 0.7},
          {"n", 2},
          {"logprobs", true},
          {"top_logprobs", 2},
          {"logit_bias", {{"5", 1}}}}},
        {"/v1/completions",
         {{"model", "fake-model"},
          {"prompt", "Say hi"},
          {"max_tokens", 8},
          {"echo", true},
          {"stream", true},
          {"stream_options", {{"include_usage", true}}},
          {"return_token_ids", true}}},
        {"/v1/messages",
         {{"model", "fake-model"},
          {"max_tokens", 8},
          {"system", "Be brief."},
          {"messages", {{{"role", "user"}, {"content", "Hi"}}}},
          {"stop_sequences", {"are"}},
          {"stream", true}},
         true},
        // Tools: the OpenAI and Anthropic shapes, past calls and results, count_tokens.
        {"/v1/chat/completions",
         {{"messages", json::parse(R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": null, "tool_calls":
            [{"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": "2"}])")},
          {"max_tokens", 8},
          {"tools", json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
            "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}])")},
          {"tool_choice", "required"},
          {"parallel_tool_calls", false},
          {"stream", true}}},
        {"/v1/messages",
         {{"max_tokens", 8},
          {"messages", json::parse(R"([{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "tool_use",
            "id": "toolu_1", "name": "f", "input": {"a": 1}}]}, {"role": "user", "content": [{"type": "tool_result",
            "tool_use_id": "toolu_1", "content": "2"}]}])")},
          {"tools", json::parse(R"([{"name": "f", "input_schema": {"type": "object", "properties": {"a": {"type": "integer"}}}}])")},
          {"tool_choice", {{"type", "auto"}}}},
         true},
        {"/v1/messages/count_tokens",
         {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
          {"tools", json::parse(R"([{"name": "f", "input_schema": {"type": "object"}}])")}},
         true},
        {"/completion", {{"prompt", "Say hi"}, {"n_predict", 8}, {"stream", false}, {"n_probs", 2}, {"stop", {"you"}}}},
        {"/tokenize", {{"content", "Hello world"}, {"with_pieces", true}}},
        {"/detokenize", {{"tokens", {9707, 1879}}}},
        // Responses: items of every kind with flat tools, streamed; a string with text.format.
        {"/v1/responses",
         {{"model", "fake-model"},
          {"input", json::parse(R"([{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]},
            {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{\"a\": 1}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "2"}])")},
          {"instructions", "Be brief."},
          {"tools", json::parse(R"([{"type": "function", "name": "f", "parameters": {"type": "object",
            "properties": {"a": {"type": "integer"}}, "required": ["a"]}}])")},
          {"tool_choice", "auto"},
          {"max_output_tokens", 8},
          {"stream", true}}},
        {"/v1/responses",
         {{"input", "Say hi"},
          {"max_output_tokens", 8},
          {"temperature", 0.7},
          {"text", {{"format", {{"type", "json_schema"}, {"name", "x"}, {"schema", {{"type", "object"}}}}}}}}},
    };
}

// A well-formed answer: 2xx or 4xx, complete, and JSON (or SSE of JSON) in the route's shape.
void check_answer(const Answer& a, const Target& t, const std::string& body) {
    INFO(t.path << " <- " << body);
    INFO("answer " << a.status << ": " << a.body.substr(0, 400));
    REQUIRE(a.finished);
    REQUIRE(a.status >= 200);
    REQUIRE(a.status < 500);
    if (a.headers.count("Content-Type") && a.headers.at("Content-Type") == "text/event-stream") {
        REQUIRE(a.status == 200);
        auto events = parse_sse(a.body);
        REQUIRE(!events.empty());
        for (const auto& ev : events) {
            if (ev.data == "[DONE]") continue;
            json j = json::parse(ev.data);  // throws (and fails) on malformed events
            if (t.anthropic) REQUIRE(j.contains("type"));
            REQUIRE(!j.contains("error"));  // the fake never fails a generation
        }
        return;
    }
    json j = json::parse(a.body);
    if (a.status >= 400) {
        if (t.anthropic) {
            REQUIRE(j["type"] == "error");
            REQUIRE(j["error"]["message"].is_string());
        } else {
            REQUIRE(j["error"]["message"].is_string());
            REQUIRE(j["error"]["type"].is_string());
            REQUIRE(j["error"].contains("param"));
        }
    }
}

}  // namespace

TEST_CASE("api fuzz: mutated and random bodies get well-formed 2xx/4xx answers", "[api][fuzz]") {
    auto settings = ApiServer::default_settings();
    settings.info.context_length = 512;  // bounds what n x max_tokens can ask for
    settings.tokens_per_call = 8;
    ApiServer s(settings);
    Fuzzer f(20261130);
    int ok = 0, refused = 0;
    for (const Target& t : targets()) {
        REQUIRE(s.post(t.path, t.seed).status == 200);  // the seeds themselves are valid
        for (int i = 0; i < 1000; ++i) {
            json body = t.seed;
            for (int k = 0, n = 1 + f.pick(3); k < n; ++k) f.mutate(body);
            std::string text = f.pick(10) == 0 ? f.random_value().dump() : body.dump();
            if (f.pick(4) == 0) f.damage(text);
            Answer a = s.post(t.path, text);
            check_answer(a, t, text);
            (a.status < 300 ? ok : refused)++;
        }
    }
    CHECK(s.service.wait_idle(std::chrono::seconds(10)));
    // Both kinds happen, or the mutations are too tame or too wild to test much.
    CHECK(ok > 200);
    CHECK(refused > 200);
}
