// tok_check.h: checking a tokenizer against a golden.json recorded with transformers.
#pragma once
#include <iosfwd>
#include <string>

#include "radiance/text/tokenizer.h"

namespace radiance::tools {

// tokenizer.json (with tokenizer_config.json beside it when present) or GPT-2's encoder.json
// (with vocab.bpe beside it). Anything else, a .rad container included for now, is refused
// with a TokenizerError that says so.
text::Tokenizer load_tokenizer_any(const std::string& path);

struct TokCheckResult {
    int passed = 0;
    int failed = 0;
};

// For every case of golden.json ({"cases": [{"text", "ids", "ids_with_special", "decoded",
// "decoded_skip_special"}]}) compares encode without and with special tokens, decode of ids
// and decode of ids_with_special skipping special tokens; and, when the file has a "decodes"
// array ({"ids", "text", "text_skip"}), decode of those ids without and with skipping.
// Prints each mismatch to `out`.
TokCheckResult run_tok_check(const text::Tokenizer& tokenizer, const std::string& golden_path, std::ostream& out);

}  // namespace radiance::tools
