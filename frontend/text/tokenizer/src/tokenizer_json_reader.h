// tokenizer_json_reader.h: reads tokenizer.json with the big BPE tables (model.vocab and
// model.merges) streamed straight into vectors. Building a JSON tree for 150k vocabulary
// entries and as many merges costs more time and memory than the tokenizer itself.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace radiance::text {

struct TokenizerJson {
    // The whole document, except that model.vocab (when an object) and model.merges are null.
    nlohmann::json document;
    bool has_vocab = false, has_merges = false;
    std::vector<std::pair<std::string, int32_t>> vocab;       // file order
    std::vector<std::pair<std::string, std::string>> merges;  // rank order
};

// Throws TokenizerError for malformed JSON or malformed vocab/merges entries.
TokenizerJson read_tokenizer_json(std::string_view text);

// Splits a merges entry of the old "a b" form.
std::pair<std::string, std::string> split_merge_line(const std::string& line);

}  // namespace radiance::text
