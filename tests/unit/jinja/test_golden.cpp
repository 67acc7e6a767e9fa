// The golden file made with transformers' apply_chat_template: every render must match
// byte for byte (or fail where transformers failed). The chat templates shipped in the
// shared tokenizer configs must parse and render a plain conversation.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "chat_check.h"
#include "radiance/jinja/chat_template.h"

namespace {
using nlohmann::ordered_json;
namespace fs = std::filesystem;

ordered_json load_json(const fs::path& path) {
    std::ifstream in(path);
    REQUIRE(in);
    return ordered_json::parse(in);
}
}  // namespace

TEST_CASE("jinja golden chat template renders match transformers byte for byte", "[jinja][golden]") {
    const std::string path = RAD_GOLDEN_CHAT_TEMPLATES;
    const ordered_json golden = load_json(path);
    REQUIRE(golden["renders"].size() > 0);
    size_t index = 0;
    for (const ordered_json& entry : golden["renders"]) {
        const std::string name = entry["template"].get<std::string>();
        DYNAMIC_SECTION("render " << index << " (" << name << ")") {
            const radiance::jinja::ChatTemplate tmpl(golden["templates"][name].get<std::string>());
            const ordered_json ctx = radiance_chat_check_context(entry, path);
            if (entry.contains("error")) {
                CHECK_THROWS_AS(tmpl.render(ctx), radiance::jinja::Error);
            } else {
                CHECK(tmpl.render(ctx) == entry["rendered"].get<std::string>());
            }
        }
        ++index;
    }
}

TEST_CASE("jinja chat templates of the shared tokenizers render a conversation", "[jinja][golden]") {
    const ordered_json conversation = ordered_json::parse(R"([
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hello from the test"},
    {"role": "assistant", "content": "Hi!"},
    {"role": "user", "content": "Bye"}])");
    size_t rendered = 0;
    for (const auto& dir : fs::directory_iterator(RAD_TOKENIZERS_DIR)) {
        const fs::path config_path = dir.path() / "tokenizer_config.json";
        if (!fs::exists(config_path)) continue;
        const ordered_json config = load_json(config_path);
        ordered_json source = config.value("chat_template", ordered_json());
        if (source.is_array())  // named templates: use "default"
            for (const auto& named : source)
                if (named.value("name", "") == "default") source = named["template"];
        if (!source.is_string()) continue;  // e.g. Mistral's config has no template
        DYNAMIC_SECTION(dir.path().filename().string()) {
            ordered_json ctx = {{"messages", conversation}, {"add_generation_prompt", true}};
            for (const char* key : {"bos_token", "eos_token"}) {
                const ordered_json& tok = config.value(key, ordered_json());
                if (tok.is_string()) ctx[key] = tok;
                if (tok.is_object()) ctx[key] = tok.value("content", "");
            }
            const std::string out = radiance::jinja::ChatTemplate(source.get<std::string>()).render(ctx);
            CHECK_THAT(out, Catch::Matchers::Contains("Hello from the test"));
            CHECK_THAT(out, Catch::Matchers::Contains("Bye"));
        }
        ++rendered;
    }
    CHECK(rendered >= 2);
}

TEST_CASE("jinja qwen3 template from the shared tokenizer handles tools and tool calls", "[jinja][golden]") {
    const ordered_json config = load_json(fs::path(RAD_TOKENIZERS_DIR) / "qwen3" / "tokenizer_config.json");
    const radiance::jinja::ChatTemplate tmpl(config["chat_template"].get<std::string>());
    const ordered_json ctx = ordered_json::parse(R"({
    "tools": [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}],
    "messages": [
      {"role": "user", "content": "Find x"},
      {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "lookup", "arguments": "{\"q\": \"x\"}"}}]},
      {"role": "tool", "content": "found"},
      {"role": "assistant", "content": "Done", "reasoning_content": "easy"}]})");
    const std::string out = tmpl.render(ctx);
    CHECK_THAT(out, Catch::Matchers::Contains(R"({"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}})"));
    CHECK_THAT(out, Catch::Matchers::Contains("<tool_call>\n{\"name\": \"lookup\", \"arguments\": {\"q\": \"x\"}}\n</tool_call>"));
    CHECK_THAT(out, Catch::Matchers::Contains("<|im_start|>user\n<tool_response>\nfound\n</tool_response><|im_end|>"));
    CHECK_THAT(out, Catch::Matchers::EndsWith("<|im_start|>assistant\n<think>\neasy\n</think>\n\nDone<|im_end|>\n"));
}
