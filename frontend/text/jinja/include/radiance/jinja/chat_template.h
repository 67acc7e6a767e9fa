// Chat templates rendered the way transformers' apply_chat_template(tokenize=False)
// does: the context's keys become template variables; `tools` and `documents` default
// to None and `add_generation_prompt` to False when absent; `continue_final_message`
// is not passed to the template but cuts the output after the final message's text.
// Special tokens (bos_token, eos_token, ...) are ordinary context keys: transformers
// adds them from the tokenizer, so callers must too.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "radiance/jinja/template.h"

namespace radiance::jinja {

class ChatTemplate {
public:
    explicit ChatTemplate(std::string_view source, Options options = {}) : template_(source, std::move(options)) {}

    std::string render(const Value& context) const;
    // Pass ordered_json to keep the caller's key order in tojson output.
    std::string render(const nlohmann::ordered_json& context) const;
    std::string render(const nlohmann::json& context) const;

private:
    Template template_;
};

// One-shot helpers: parse and render. Throw Error on syntax or runtime errors.
std::string render_chat_template(const std::string& tmpl, const nlohmann::ordered_json& context);
std::string render_chat_template(const std::string& tmpl, const nlohmann::json& context);

}  // namespace radiance::jinja
