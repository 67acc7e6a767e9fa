// Each family's tool-call parser against outputs as the families write them (the markup their
// chat templates ask for: Qwen3's <tool_call> blocks, Llama 3.1's {"name", "parameters"} with or
// without <|python_tag|>, Mistral's [TOOL_CALLS] in both spellings, the bare JSON array), read
// whole and streamed in every chunking the seeds below make; broken markup is text.
// Mutations seen failing (then reverted): content_of keeping blank text between calls (the
// "Sure." case gets content "Sure.\n"); ToolCallStream showing a call before its name was read
// (a first delta with an empty name, every family); scan_value not skipping strings (the '}'
// inside a string closes the object early: the parallel hermes case becomes text).
#include <chrono>
#include <random>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "tool_call_parser.h"
#include "tool_call_stream.h"

using namespace radiance::frontend::tools;

namespace {

struct Expected {
    std::string content;
    std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
};

NewCallId counter_ids() {
    auto n = std::make_shared<int>(0);
    return [n] { return "id" + std::to_string((*n)++); };
}

ToolOutput whole(const ToolCallParser& p, const std::string& text) { return read_tool_calls(p, text, counter_ids()); }

// The stream's deltas added up: content, and per call its id, name and arguments.
ToolOutput streamed(const ToolCallParser& p, const std::string& text, std::mt19937& rng) {
    ToolCallStream s(p, counter_ids());
    ToolOutput out;
    auto take = [&](const ToolDelta& d) {
        out.content += d.content;
        for (const auto& c : d.calls) {
            if (c.index == out.calls.size()) {
                REQUIRE_FALSE(c.id.empty());  // a call's first delta has its id and name
                REQUIRE_FALSE(c.name.empty());
                out.calls.push_back({c.id, c.name, ""});
            }
            REQUIRE(c.index < out.calls.size());
            if (c.index + 1 < out.calls.size()) REQUIRE(c.arguments.empty());  // an earlier call is done
            out.calls[c.index].arguments += c.arguments;
        }
    };
    size_t i = 0;
    std::uniform_int_distribution<size_t> len(1, 7);
    while (i < text.size()) {
        size_t n = std::min(len(rng), text.size() - i);
        take(s.push(text.substr(i, n)));
        i += n;
    }
    take(s.finish());
    return out;
}

// Broken markup: the answer is the whole text. A stream that had already shown the broken call
// (its name came before the break) cannot take it back; it still shows the whole text as content.
void check_broken(const ToolCallParser& p, const std::string& text) {
    INFO(p.name() << ": " << text);
    const ToolOutput w = whole(p, text);
    CHECK(w.content == text);
    CHECK(w.calls.empty());
    std::mt19937 rng(11);
    for (int seed = 0; seed < 40; ++seed) {
        const ToolOutput s = streamed(p, text, rng);
        CHECK(s.content == text);
        CHECK(s.calls.size() <= 1);
    }
}

void check(const ToolCallParser& p, const std::string& text, const Expected& e) {
    INFO(p.name() << ": " << text);
    const ToolOutput w = whole(p, text);
    CHECK(w.content == e.content);
    REQUIRE(w.calls.size() == e.calls.size());
    for (size_t i = 0; i < e.calls.size(); ++i) {
        CHECK(w.calls[i].name == e.calls[i].first);
        CHECK(w.calls[i].arguments == e.calls[i].second);
        CHECK_FALSE(nlohmann::json::parse(w.calls[i].arguments, nullptr, false).is_discarded());
    }
    std::mt19937 rng(7);
    for (int seed = 0; seed < 40; ++seed) {
        const ToolOutput s = streamed(p, text, rng);
        CHECK(s.content == e.content);
        REQUIRE(s.calls.size() == e.calls.size());
        for (size_t i = 0; i < e.calls.size(); ++i) {
            CHECK(s.calls[i].name == e.calls[i].first);
            CHECK(s.calls[i].arguments == e.calls[i].second);
        }
    }
    // One character at a time too.
    ToolCallStream s(p, counter_ids());
    std::string content;
    for (char c : text) content += s.push(std::string(1, c)).content;
    content += s.finish().content;
    CHECK(content == e.content);
}

const ToolCallParser& parser(const char* name) {
    const ToolCallParser* p = find_tool_parser(name);
    REQUIRE(p);
    return *p;
}

}  // namespace

TEST_CASE("api tool parsers: hermes (Qwen2.5, Qwen3)", "[api]") {
    const auto& p = parser("hermes");
    check(p, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
          {"", {{"get_weather", R"({"city": "Paris"})"}}});
    // Parallel calls; the blank line between them is not content.
    check(p,
          "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n<tool_call>\n{\"name\": "
          "\"get_time\", \"arguments\": {\"zone\": \"CET\", \"fmt\": [1, {\"a\": \"}\"}]}}\n</tool_call>",
          {"", {{"get_weather", R"({"city": "Paris"})"}, {"get_time", R"({"zone": "CET", "fmt": [1, {"a": "}"}]})"}}});
    // Text before parallel calls is content; the newline between the calls is not.
    check(p,
          "Sure.<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>",
          {"Sure.", {{"a", "{}"}, {"b", "{}"}}});
    // Text (and Qwen3's thinking) before the call stays content.
    check(p,
          "<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
          "{}}\n</tool_call>",
          {"<think>\nThe user wants the weather.\n</think>\n\nLet me check.\n", {{"get_weather", "{}"}}});
    // Arguments first, name last; arguments quoted as a string; no arguments.
    check(p, "<tool_call>{\"arguments\": {\"q\": \"a \\\"b\\\"\"}, \"name\": \"search\"}</tool_call>",
          {"", {{"search", R"({"q": "a \"b\""})"}}});
    check(p, "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"x\\\": 1}\"}</tool_call>", {"", {{"f", R"({"x": 1})"}}});
    check(p, "<tool_call>\n{\"name\": \"ping\"}\n</tool_call>", {"", {{"ping", "{}"}}});
    // As vLLM: a last block that lost its </tool_call> still counts when its JSON is whole.
    check(p, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n", {"", {{"f", R"({"a": 1})"}}});
    // Text after the calls is content too.
    check(p, "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>\nDone.", {"\nDone.", {{"f", "{}"}}});
    // Plain text, including text that looks like the start of markup.
    check(p, "No tools needed: a < b and <tool", {"No tools needed: a < b and <tool", {}});
    check(p, "", {"", {}});
}

TEST_CASE("api tool parsers: hermes markup that breaks is text", "[api]") {
    const auto& p = parser("hermes");
    for (const std::string text : {
             "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }}\n</tool_call>",  // not JSON
             "<tool_call>not json</tool_call>",
             "<tool_call>\n{\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",  // no name
             "<tool_call>\n{\"name\": \"\", \"arguments\": {}}\n</tool_call>",
             "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\nmore</tool_call>",  // text where </tool_call> must be
             "Sure.<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": ",                  // cut short
             "<tool_call>\n{\"name\": 3}</tool_call>",
         })
        check_broken(p, text);
}

TEST_CASE("api tool parsers: llama3_json (Llama 3.1, 3.2, 3.3)", "[api]") {
    const auto& p = parser("llama3_json");
    check(p, R"({"name": "get_weather", "parameters": {"city": "Paris"}})", {"", {{"get_weather", R"({"city": "Paris"})"}}});
    check(p, R"(<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}})", {"", {{"get_weather", R"({"city": "Paris"})"}}});
    check(p, R"({"name": "a", "parameters": {"x": 1}}; {"name": "b", "arguments": {"y": [2]}})",
          {"", {{"a", R"({"x": 1})"}, {"b", R"({"y": [2]})"}}});
    // Text first is text; JSON that is not a call is text.
    check(p, R"(The call would be {"name": "a", "parameters": {}})", {R"(The call would be {"name": "a", "parameters": {}})", {}});
    check(p, R"({"answer": 42})", {R"({"answer": 42})", {}});
    check_broken(p, R"({"name": "a", "parameters": {"x": 1}} and more)");
    check_broken(p, R"({"name": "a", "parameters": {"x": )");
}

TEST_CASE("api tool parsers: mistral, both spellings", "[api]") {
    const auto& p = parser("mistral");
    CHECK(p.needs_special_tokens());
    CHECK(p.new_call_id().size() == 9);  // Mistral's templates refuse other ids
    check(p, R"([TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}}])", {"", {{"get_weather", R"({"city": "Paris"})"}}});
    check(p, R"(Checking.[TOOL_CALLS][{"name": "a", "arguments": {"x": 1}}, {"name": "b", "arguments": {}}])",
          {"Checking.", {{"a", R"({"x": 1})"}, {"b", "{}"}}});
    check(p, R"([TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]get_time[ARGS]{})",
          {"", {{"get_weather", R"({"city": "Paris"})"}, {"get_time", "{}"}}});
    check(p, R"([TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{"k": "v"})", {"", {{"f", R"({"k": "v"})"}}});
    check(p, "Just text about [TOOL", {"Just text about [TOOL", {}});
    for (const std::string& text :
         {std::string(R"([TOOL_CALLS] [{"name": "a", "arguments": {"x": }])"), std::string(R"([TOOL_CALLS]not a call)"),
          std::string(R"([TOOL_CALLS][{"name": "a", "arguments": {}})")})
        check_broken(p, text);
}

TEST_CASE("api tool parsers: json (templates without markup, constrained calls)", "[api]") {
    const auto& p = parser("json");
    check(p, R"([{"name": "get_weather", "arguments": {"city": "Paris"}}, {"name": "f", "parameters": {}}])",
          {"", {{"get_weather", R"({"city": "Paris"})"}, {"f", "{}"}}});
    check(p, R"({"name":"get_weather","arguments":{"city":"Paris"}})", {"", {{"get_weather", R"({"city":"Paris"})"}}});
    check(p, "Call me Ishmael.", {"Call me Ishmael.", {}});
    check(p, R"([1, 2])", {"[1, 2]", {}});
    check_broken(p, R"([{"name": "a", "arguments": {}}] tail)");
}

TEST_CASE("api tool parsers: chosen from the chat template, or by name", "[api]") {
    CHECK(detect_tool_parser("... <tool_call>\\n{\"name\": <function-name>, ...").name() == "hermes");
    CHECK(detect_tool_parser("{%- if message.tool_calls %}[TOOL_CALLS][...").name() == "mistral");
    CHECK(detect_tool_parser("{{- '<|python_tag|>' + ...").name() == "llama3_json");
    CHECK(detect_tool_parser("{{ bos_token }}Question: {{ m['content'] }}").name() == "json");
    CHECK(find_tool_parser("nope") == nullptr);
    CHECK(tool_parser_names() == std::vector<std::string>{"hermes", "llama3_json", "mistral", "json"});
}

// A stream reads only the text no earlier delta settled: a long answer with tools costs time in
// proportion to its length, not its square (the parsers run on the scheduler's thread).
// Mutation seen failing: base_ never advancing (hermes 54 s, mistral 34 s for the 1.2 MB answer
// in 4-byte deltas; 0.04 s each with it).
TEST_CASE("api tool parsers: a long streamed answer costs linear time", "[api]") {
    std::string text;
    while (text.size() < 1200000) text += "Call me Ishmael. Some years ago <b>never mind</b> how long [precisely] {having} little money.\n";
    const size_t prose = text.size();
    text += "<tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>";
    for (const char* name : {"hermes", "mistral", "llama3_json", "json"}) {
        const auto t0 = std::chrono::steady_clock::now();
        ToolCallStream s(parser(name), counter_ids());
        size_t shown = 0;
        for (size_t i = 0; i < text.size(); i += 4) shown += s.push(std::string_view(text).substr(i, 4)).content.size();
        shown += s.finish().content.size();
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        INFO(name << ": " << secs << " s");
        CHECK(secs < 1.0);
        CHECK(shown == (std::string(name) == "hermes" ? prose : text.size()));  // hermes: a call at the end
    }
}
