// tokenizer_impl.h: the loaded pipeline behind radiance::text::Tokenizer.
#pragma once
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "added_vocabulary.h"
#include "bpe_model.h"
#include "decoders.h"
#include "normalizers.h"
#include "post_processors.h"
#include "pre_tokenizers.h"
#include "radiance/text/tokenizer.h"

namespace radiance::text::detail {

struct TokenizerImpl {
    std::unique_ptr<Normalizer> normalizer;
    std::unique_ptr<PreTokenizer> pre_tokenizer;
    std::unique_ptr<BpeModel> model;
    std::unique_ptr<PostProcessor> post_processor;
    std::unique_ptr<Decoder> decoder;
    DecoderTraits decoder_traits;
    std::unique_ptr<AddedVocabulary> added;
    // Set when the pre-tokenizer is "split with this regex, then map bytes" (ByteLevel with
    // use_regex, or Split(Isolated) + ByteLevel): encode then bypasses pre_tokenizer.
    std::unique_ptr<Regex> byte_level_split;

    // Filled by finish(): per id, the added token index (-1) and whether it is special.
    std::vector<int32_t> added_index;
    std::vector<bool> special;
    std::unordered_map<std::string, TokenId> added_by_content;
    size_t id_space = 0;

    std::optional<std::string> bos_token, eos_token;
    std::optional<TokenId> bos_id, eos_id;

    // Derives the per-id tables once every part is set.
    void finish();

    // Text -> ids without the post-processor.
    void encode_raw(std::string_view text, std::vector<TokenId>& out) const;
    std::vector<TokenId> post_process(std::vector<std::vector<TokenId>> encodings, bool add_special_tokens) const;
    // The string decode() feeds the decoder for an id (nullptr when unknown).
    const std::string* token_string(TokenId id) const;
    std::string decode(std::span<const TokenId> ids, bool skip_special_tokens, bool continuation) const;
    std::optional<TokenId> token_to_id(std::string_view token) const;
};

}  // namespace radiance::text::detail
