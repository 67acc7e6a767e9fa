// tokenizer.h: a Hugging Face tokenizer.json tokenizer (BPE models: byte-level GPT-2/Llama 3/
// Qwen and SentencePiece-style Llama 2/Mistral), written to give the same ids and text as the
// `tokenizers` library as used by transformers.
//
// A Tokenizer is immutable after loading and cheap to copy (it shares its tables); encode and
// decode may be called from any number of threads at once.
//
// Invalid UTF-8 given to encode() is not an error: every maximal ill-formed subsequence is
// replaced by U+FFFD first (as Rust's String::from_utf8_lossy and Python's errors="replace").
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace radiance::text {

using TokenId = int32_t;

// Thrown for files that cannot be read, are malformed, or use a feature not implemented here.
class TokenizerError : public std::runtime_error {
public:
    explicit TokenizerError(const std::string& what) : std::runtime_error(what) {}
};

struct LoadOptions {
    // When tokenizer_config.json sets add_bos_token/add_eos_token, transformers replaces the
    // post-processor with a template adding those tokens; do the same.
    bool apply_config_bos_eos = true;
    // Recognise the usual byte-level layout (a regex split, then ByteLevel) and run it as one
    // pass keyed by raw bytes. Same results; off only to test that claim.
    bool fast_paths = true;
};

struct AddedTokenInfo {
    TokenId id;
    std::string content;
    bool special;
};

namespace detail {
struct TokenizerImpl;
}

// Whether bytes are well-formed UTF-8 (token_bytes() of a byte token may not be).
bool is_valid_utf8(std::string_view bytes);

class Tokenizer {
public:
    // tokenizer.json (+ optional tokenizer_config.json for bos/eos and add_*_token flags).
    static Tokenizer from_file(const std::string& tokenizer_json_path, const std::string& config_json_path = {},
                               const LoadOptions& options = {});
    // The same from the files' bytes (the model container carries tokenizer.json).
    static Tokenizer from_json(std::string_view tokenizer_json, std::string_view config_json = {}, const LoadOptions& options = {});
    // GPT-2's original encoder.json + vocab.bpe pair.
    static Tokenizer from_gpt2_files(const std::string& encoder_json_path, const std::string& vocab_bpe_path);

    // Text -> ids. add_special_tokens applies the post-processor (e.g. a BOS token).
    std::vector<TokenId> encode(std::string_view text, bool add_special_tokens = true) const;
    std::vector<TokenId> encode_pair(std::string_view first, std::string_view second, bool add_special_tokens = true) const;
    // Ids -> text. Unknown ids are ignored, as the `tokenizers` library does.
    std::string decode(std::span<const TokenId> ids, bool skip_special_tokens = false) const;

    // The raw bytes one token contributes in the middle of a text: a byte token's byte, a
    // byte-level token's bytes (possibly part of a UTF-8 character), a SentencePiece token's
    // text with its word-start space. Joined over a decode's tokens they give its text
    // wherever that text is valid UTF-8. Empty for unknown ids, and for special tokens when
    // skip_special_tokens (decode leaves them out too).
    std::string token_bytes(TokenId id, bool skip_special_tokens = false) const;

    // Number of ids in use: model vocabulary and added tokens (max id + 1).
    size_t vocab_size() const;
    std::optional<TokenId> token_to_id(std::string_view token) const;
    std::optional<std::string> id_to_token(TokenId id) const;
    bool is_special(TokenId id) const;
    std::vector<TokenId> special_token_ids() const;    // sorted
    std::vector<AddedTokenInfo> added_tokens() const;  // sorted by id

    // From tokenizer_config.json when one was given (GPT-2 files: <|endoftext|>).
    std::optional<TokenId> bos_id() const;
    std::optional<TokenId> eos_id() const;
    std::optional<std::string> bos_token() const;
    std::optional<std::string> eos_token() const;

    // The loaded pipeline, for StreamDecoder and white-box tests.
    const detail::TokenizerImpl& impl() const { return *impl_; }

private:
    explicit Tokenizer(std::shared_ptr<const detail::TokenizerImpl> impl) : impl_(std::move(impl)) {}
    std::shared_ptr<const detail::TokenizerImpl> impl_;
};

}  // namespace radiance::text
