// bpe_files.h: a byte-level BPE tokenizer given as GPT-2's two files (vocab.json and merges.txt,
// the encoder.json and vocab.bpe of the original release) written as the tokenizer.json that
// Hugging Face's tokenizers library makes of them (GPT2TokenizerFast), so a checkpoint folder
// that carries only those two files still yields a container with its tokenizer.
#pragma once
#include <string>

namespace radiance::convert {

// The tokenizer.json text: BPE over vocab and merges, ByteLevel pre-tokenizer (no prefix space),
// post-processor and decoder, and <|endoftext|> as a special added token where the vocabulary has
// it. Throws Error naming the file and line on a malformed vocabulary or merge line.
std::string tokenizer_json_from_bpe_files(const std::string& vocab_json, const std::string& merges_txt, const std::string& where);

}  // namespace radiance::convert
