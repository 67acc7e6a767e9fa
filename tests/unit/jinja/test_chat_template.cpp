// The chat-template API: the variables transformers' apply_chat_template defines, key
// order of JSON contexts, continue_final_message, and parse-once/render-many use.
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "radiance/jinja/chat_template.h"

namespace {
using nlohmann::ordered_json;
using radiance::jinja::ChatTemplate;
using radiance::jinja::Error;
using radiance::jinja::render_chat_template;

const char* kChatml =
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
}  // namespace

TEST_CASE("jinja chat context defines tools, documents and add_generation_prompt like transformers", "[jinja]") {
    const std::string t = "{{ tools is none }}{{ documents is none }}{{ add_generation_prompt }}{{ enable_thinking is defined }}";
    CHECK(render_chat_template(t, ordered_json{{"messages", ordered_json::array()}}) == "TrueTrueFalseFalse");
    CHECK(render_chat_template(t, ordered_json{{"add_generation_prompt", true}, {"enable_thinking", false}}) == "TrueTrueTrueTrue");
}

TEST_CASE("jinja chat context keeps the key order of ordered_json", "[jinja]") {
    const auto ctx = ordered_json::parse(R"({"tools": [{"type": "function", "function": {"name": "f"}}]})");
    CHECK(render_chat_template("{{ tools[0] | tojson }}", ctx) == R"({"type": "function", "function": {"name": "f"}})");
    // nlohmann::json itself stores keys sorted; that order is what the template sees.
    const auto sorted = nlohmann::json::parse(R"({"tools": [{"type": "function", "function": {"name": "f"}}]})");
    CHECK(render_chat_template("{{ tools[0] | tojson }}", sorted) == R"({"function": {"name": "f"}, "type": "function"})");
}

TEST_CASE("jinja continue_final_message cuts the render after the final message", "[jinja]") {
    ordered_json ctx = {{"messages", {{{"role", "user"}, {"content", "Hi"}}, {{"role", "assistant"}, {"content", "The answer is"}}}},
                        {"continue_final_message", true}};
    CHECK(render_chat_template(kChatml, ctx) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nThe answer is");
    ctx["messages"][1]["content"] = "partial  ";
    CHECK(render_chat_template(kChatml, ctx) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\npartial  ");
    // A template that trims the message loses its trailing spaces, and so does the cut.
    CHECK(render_chat_template("{% for m in messages %}[{{ m.role }}]{{ m.content | trim }}</s>{% endfor %}", ctx) ==
          "[user]Hi</s>[assistant]partial");
    // continue_final_message is an argument of apply_chat_template, not a template variable.
    CHECK(render_chat_template("{{ continue_final_message is defined }}",
                               ordered_json{{"messages", {{{"role", "user"}, {"content", "False"}}}}, {"continue_final_message", true}}) ==
          "False");
    ctx["add_generation_prompt"] = true;
    CHECK_THROWS_AS(render_chat_template(kChatml, ctx), Error);
}

TEST_CASE("jinja chat template parses once and renders many times, also concurrently", "[jinja]") {
    const ChatTemplate t(kChatml);
    std::vector<std::string> outputs(8);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < outputs.size(); ++i) {
        threads.emplace_back([&, i] {
            for (int k = 0; k < 50; ++k) {
                ordered_json ctx = {{"messages", {{{"role", "user"}, {"content", "m" + std::to_string(i)}}}},
                                    {"add_generation_prompt", true}};
                outputs[i] = t.render(ctx);
            }
        });
    }
    for (auto& th : threads) th.join();
    for (size_t i = 0; i < outputs.size(); ++i)
        CHECK(outputs[i] == "<|im_start|>user\nm" + std::to_string(i) + "<|im_end|>\n<|im_start|>assistant\n");
}

TEST_CASE("jinja chat template rejects a context that is not an object", "[jinja]") {
    CHECK_THROWS_AS(render_chat_template(kChatml, ordered_json::array()), Error);
    CHECK_THROWS_AS(ChatTemplate("{% if %}"), Error);
}
