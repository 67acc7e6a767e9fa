#include "chat_check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "radiance/jinja/chat_template.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// transformers renders with {**tokenizer.special_tokens_map, **kwargs}, but golden files
// record only the kwargs. The tokens come from the model's tokenizer_config.json when
// shared/tokenizers/<template name>/ has one; for families whose tokenizer is not
// shipped there, these are the strings their tokenizers define.
const std::map<std::string, ordered_json>& known_family_tokens() {
    static const std::map<std::string, ordered_json> tokens = {
        {"gemma", {{"bos_token", "<bos>"}, {"eos_token", "<eos>"}, {"unk_token", "<unk>"}, {"pad_token", "<pad>"}}},
        {"llama3", {{"bos_token", "<|begin_of_text|>"}, {"eos_token", "<|end_of_text|>"}}},
        {"qwen", {{"eos_token", "<|im_end|>"}, {"pad_token", "<|endoftext|>"}}},
        {"mistral", {{"bos_token", "<s>"}, {"eos_token", "</s>"}, {"unk_token", "<unk>"}}},
    };
    return tokens;
}

// tokenizer_config.json stores a token as a string or as {"content": "...", ...}.
void add_token(ordered_json& out, const ordered_json& config, const char* key) {
    if (!config.contains(key)) return;
    const ordered_json& v = config[key];
    if (v.is_string()) out[key] = v;
    if (v.is_object() && v.contains("content") && v["content"].is_string()) out[key] = v["content"];
}

ordered_json special_tokens(const std::string& template_name, const std::string& golden_path) {
    const fs::path config = fs::path(golden_path).parent_path() / ".." / "tokenizers" / template_name / "tokenizer_config.json";
    std::ifstream in(config);
    if (in) {
        try {
            const ordered_json cfg = ordered_json::parse(in);
            ordered_json out = ordered_json::object();
            for (const char* key : {"bos_token", "eos_token", "unk_token", "pad_token"}) add_token(out, cfg, key);
            return out;
        } catch (const std::exception&) {
            // Unreadable config: fall back to the family table.
        }
    }
    for (const auto& [family, tokens] : known_family_tokens())
        if (template_name.rfind(family, 0) == 0) return tokens;
    return ordered_json::object();
}

// Shows `s` around `offset` as a JSON string, so newlines and control bytes are visible.
std::string excerpt(const std::string& s, size_t offset) {
    const size_t radius = 40;
    const size_t begin = offset > radius ? offset - radius : 0;
    const size_t end = std::min(s.size(), offset + radius);
    std::string text = (begin > 0 ? "..." : "") + s.substr(begin, end - begin) + (end < s.size() ? "..." : "");
    return ordered_json(text).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

void print_mismatch(size_t index, const std::string& name, const std::string& expected, const std::string& got) {
    size_t offset = 0;
    while (offset < expected.size() && offset < got.size() && expected[offset] == got[offset]) ++offset;
    std::cout << "[" << index << "] " << name << ": first difference at byte " << offset << " (expected " << expected.size()
              << " bytes, got " << got.size() << ")\n"
              << "  expected: " << excerpt(expected, offset) << "\n"
              << "  got:      " << excerpt(got, offset) << "\n";
}

}  // namespace

ordered_json radiance_chat_check_context(const ordered_json& entry, const std::string& golden_path) {
    ordered_json ctx = special_tokens(entry.value("template", std::string()), golden_path);
    ctx["messages"] = entry.contains("messages") ? entry["messages"] : ordered_json::array();
    if (entry.contains("kwargs") && entry["kwargs"].is_object())
        for (const auto& [k, v] : entry["kwargs"].items()) ctx[k] = v;
    return ctx;
}

int radiance_chat_check(const std::string& golden_path) {
    ordered_json golden;
    try {
        std::ifstream in(golden_path);
        if (!in) throw std::runtime_error("cannot open file");
        golden = ordered_json::parse(in);
        if (!golden.contains("templates") || !golden.contains("renders")) throw std::runtime_error("missing templates or renders");
    } catch (const std::exception& e) {
        std::cerr << "chat check: " << golden_path << ": " << e.what() << "\n";
        return 2;
    }

    // Parse each template once; a template that does not parse fails its entries.
    std::map<std::string, std::shared_ptr<radiance::jinja::ChatTemplate>> templates;
    std::map<std::string, std::string> parse_errors;
    for (const auto& [name, source] : golden["templates"].items()) {
        try {
            templates[name] = std::make_shared<radiance::jinja::ChatTemplate>(source.get<std::string>());
        } catch (const std::exception& e) {
            parse_errors[name] = e.what();
        }
    }

    size_t passed = 0;
    size_t failed = 0;
    size_t index = 0;
    for (const ordered_json& entry : golden["renders"]) {
        const size_t i = index++;
        const std::string name = entry.value("template", std::string());
        const bool expect_error = entry.contains("error");
        std::string rendered;
        std::string error;
        const auto it = templates.find(name);
        if (it == templates.end()) {
            error = parse_errors.count(name) ? parse_errors[name] : "no template named '" + name + "'";
        } else {
            try {
                rendered = it->second->render(radiance_chat_check_context(entry, golden_path));
            } catch (const std::exception& e) {
                error = e.what();
            }
        }
        if (expect_error) {
            if (!error.empty()) {
                ++passed;
            } else {
                ++failed;
                std::cout << "[" << i << "] " << name << ": expected an error (" << entry["error"].dump() << "), but it rendered "
                          << rendered.size() << " bytes\n";
            }
            continue;
        }
        const std::string expected = entry.value("rendered", std::string());
        if (!error.empty()) {
            ++failed;
            std::cout << "[" << i << "] " << name << ": render failed: " << error << "\n";
        } else if (rendered != expected) {
            ++failed;
            print_mismatch(i, name, expected, rendered);
        } else {
            ++passed;
        }
    }
    std::cout << passed << " passed, " << failed << " failed\n";
    return failed == 0 ? 0 : 1;
}
