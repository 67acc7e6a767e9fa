// bpe_files.cpp: GPT-2's vocab.json + merges.txt as a tokenizer.json (bpe_files.h).
#include "radiance/convert/bpe_files.h"

#include <nlohmann/json.hpp>
#include <sstream>

#include "radiance/util/error.h"

namespace radiance::convert {

std::string tokenizer_json_from_bpe_files(const std::string& vocab_json, const std::string& merges_txt, const std::string& where) {
    auto vocab = nlohmann::json::parse(vocab_json, nullptr, false);
    if (vocab.is_discarded() || !vocab.is_object()) throw Error(where + "/vocab.json is not a JSON object of token -> id");
    for (auto it = vocab.begin(); it != vocab.end(); ++it)
        if (!it->is_number_integer()) throw Error(where + "/vocab.json: token \"" + it.key() + "\" has no integer id");
    nlohmann::json merges = nlohmann::json::array();
    std::istringstream lines(merges_txt);
    int line_no = 0;
    for (std::string line; std::getline(lines, line);) {
        ++line_no;
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (line.empty() || line.rfind("#version", 0) == 0) continue;
        const size_t space = line.find(' ');
        if (space == std::string::npos || space == 0 || space + 1 == line.size() || line.find(' ', space + 1) != std::string::npos)
            throw Error(where + "/merges.txt line " + std::to_string(line_no) + ": \"" + line +
                        "\" is not two tokens separated by a space");
        merges.push_back(line);  // the "a b" form tokenizer.json files of this vintage carry
    }
    const nlohmann::json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    nlohmann::json added = nlohmann::json::array();
    const std::string eot = "<|endoftext|>";
    if (vocab.contains(eot)) added.push_back(added_token_json(vocab[eot].get<int64_t>(), eot, true, true));
    return byte_level_bpe_json(added, byte_level, vocab, merges, false);
}

nlohmann::json added_token_json(int64_t id, const std::string& content, bool normalized, bool special) {
    return {{"id", id},        {"content", content},       {"single_word", false}, {"lstrip", false},
            {"rstrip", false}, {"normalized", normalized}, {"special", special}};
}

std::string byte_level_bpe_json(const nlohmann::json& added, const nlohmann::json& pre_tokenizer, const nlohmann::json& vocab,
                                const nlohmann::json& merges, bool ignore_merges) {
    nlohmann::json tok = {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer", pre_tokenizer},
        {"post_processor", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}}},
        {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", ""},
          {"end_of_word_suffix", ""},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", ignore_merges},
          {"vocab", vocab},
          {"merges", merges}}}};
    return tok.dump();
}

}  // namespace radiance::convert
