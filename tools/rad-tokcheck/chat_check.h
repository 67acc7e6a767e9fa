// Chat-template check for rad-tokcheck: renders every entry of a golden file made with
// transformers' apply_chat_template and compares byte for byte.
//
// Golden format: {"transformers": version, "templates": {name: source},
//   "renders": [{"template": name, "messages": [...], "kwargs": {...},
//                "rendered": "..."} or with "error" instead of "rendered"]}.
// An entry with "error" passes only if rendering fails.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

// Prints each mismatch (index, template name, first differing byte with expected and
// actual context), then "N passed, M failed". Returns 0 when every entry passes, 1 when
// some fail, 2 when the file cannot be read.
int radiance_chat_check(const std::string& golden_path);

// The context an entry is rendered with: the special tokens transformers would add from
// the tokenizer (see chat_check.cpp), the messages, then the entry's kwargs.
nlohmann::ordered_json radiance_chat_check_context(const nlohmann::ordered_json& entry, const std::string& golden_path);
