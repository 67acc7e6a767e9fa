// bpe_files.h: a byte-level BPE tokenizer given as GPT-2's two files (vocab.json and merges.txt,
// the encoder.json and vocab.bpe of the original release) written as the tokenizer.json that
// Hugging Face's tokenizers library makes of them (GPT2TokenizerFast), so a checkpoint folder
// that carries only those two files still yields a container with its tokenizer.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace radiance::convert {

// The tokenizer.json text: BPE over vocab and merges, ByteLevel pre-tokenizer (no prefix space),
// post-processor and decoder, and <|endoftext|> as a special added token where the vocabulary has
// it. Throws Error naming the file and line on a malformed vocabulary or merge line.
std::string tokenizer_json_from_bpe_files(const std::string& vocab_json, const std::string& merges_txt, const std::string& where);

// One entry of tokenizer.json's added_tokens (not single-word, not stripped).
nlohmann::json added_token_json(int64_t id, const std::string& content, bool normalized, bool special);

// The tokenizer.json text of a byte-level BPE as the tokenizers library writes it: no normalizer,
// `pre_tokenizer` as given, ByteLevel post-processor and decoder, a BPE model over vocab and merges
// (the GPT-2 files' and a GGUF byte-level vocabulary's).
std::string byte_level_bpe_json(const nlohmann::json& added, const nlohmann::json& pre_tokenizer, const nlohmann::json& vocab,
                                const nlohmann::json& merges, bool ignore_merges);

}  // namespace radiance::convert
