// bpe_model.h: the BPE model: vocabulary, merge ranks, byte fallback and unknown tokens.
// Gives the same merges as the `tokenizers` library: always the lowest-ranked pair, the
// leftmost one on ties.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "flat_maps.h"

namespace radiance::text {

class BpeModel {
public:
    struct Options {
        std::optional<std::string> unk_token;
        std::string continuing_subword_prefix;
        std::string end_of_word_suffix;
        bool fuse_unk = false;
        bool byte_fallback = false;
        bool ignore_merges = false;
        // Words with more symbols than this merge through a heap (O(n log n)); shorter ones
        // with a linear scan, which is faster for them. Both give the same result.
        size_t heap_above = 32;
    };

    BpeModel(std::vector<std::pair<std::string, int32_t>> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
             Options options);

    // Appends the ids of one pre-tokenized word.
    void encode(std::string_view word, std::vector<int32_t>& out) const;
    // The same for a word given as raw bytes that the ByteLevel pre-tokenizer would map to
    // characters first: the word cache is keyed by the raw bytes, so hits skip the mapping.
    void encode_byte_level(std::string_view raw_word, std::vector<int32_t>& out) const;

    int32_t token_to_id(std::string_view token) const { return vocab_.find(token); }
    // nullptr when the id is not in the vocabulary.
    const std::string* id_to_token(int32_t id) const {
        return id >= 0 && static_cast<size_t>(id) < tokens_.size() && has_token_[id] ? &tokens_[id] : nullptr;
    }
    size_t id_space() const { return tokens_.size(); }    // max id + 1
    size_t vocab_count() const { return vocab_.size(); }  // distinct tokens

private:
    void encode_uncached(std::string_view word, std::vector<int32_t>& out) const;
    void merge(std::vector<int32_t>& out) const;  // runs the merges over the scratch symbols
    void merge_linear() const;
    void merge_with_heap() const;
    void encode_one(std::string_view word, std::vector<int32_t>& out) const;
    int32_t char_id(std::string_view ch, bool first, bool last) const;

    StringIdMap vocab_;
    std::vector<std::string> tokens_;
    std::vector<bool> has_token_;
    MergeMap merges_;
    Options options_;
    int32_t unk_id_ = -1;
    int32_t single_byte_ids_[256];      // id of each one-byte string (-1: none)
    int32_t byte_fallback_ids_[256];    // id of "<0xNN>" (-1: none)
    int32_t byte_level_ids_[256];       // id of each byte's byte-level character (-1: none)
    bool byte_level_complete_ = false;  // every byte-level character is in the vocabulary
    bool all_byte_fallback_ = false;    // every "<0xNN>" exists
    // No token contains "▁" right after another character, so no merge can cross the start
    // of a "▁" run: long SentencePiece inputs (no pre-tokenizer) are cut there, exactly.
    bool cut_before_metaspace_ = false;
    uint64_t instance_id_;  // keys the per-thread word cache
};

// The "model" object of tokenizer.json (type BPE). heap_above: see Options (tests set it).
BpeModel parse_bpe_model(const nlohmann::json& model, size_t heap_above = BpeModel::Options{}.heap_above);
// The same with vocab and merges already read (see tokenizer_json_reader.h); `model` gives the
// options.
BpeModel build_bpe_model(const nlohmann::json& model, std::vector<std::pair<std::string, int32_t>> vocab,
                         const std::vector<std::pair<std::string, std::string>>& merges);

}  // namespace radiance::text
