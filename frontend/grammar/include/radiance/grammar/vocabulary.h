// vocabulary.h: a model's tokens as the grammar matcher sees them. Each id's bytes are the bytes
// it contributes in the middle of a text (Tokenizer::token_bytes: a byte-level token's raw bytes,
// possibly part of a UTF-8 character; a SentencePiece piece with its word-start space; a byte
// token's byte). Special tokens, tokens with no bytes and ids past the tokenizer (a model's
// padded vocabulary) are never allowed inside a grammar. The usable tokens form a byte trie laid
// out in preorder, so walking every token from an automaton state is one pass over arrays that
// skips whole subtrees the state refuses. Built once per tokenizer; immutable, shared.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace radiance::text {
class Tokenizer;
}

namespace radiance::grammar {

class Vocabulary {
public:
    // bytes[i] for ids [0, bytes.size()); usable[i] false for ids never allowed inside a grammar;
    // mask_size: the model's vocabulary (masks cover it; ids past bytes.size() are never allowed).
    static std::shared_ptr<const Vocabulary> build(const std::vector<std::string>& bytes, const std::vector<uint8_t>& usable,
                                                   int64_t mask_size);
    static std::shared_ptr<const Vocabulary> from_tokenizer(const text::Tokenizer& tokenizer, int64_t mask_size);

    int64_t size() const { return size_; }  // ids a mask covers
    size_t words() const { return (static_cast<size_t>(size_) + 31) / 32; }
    std::string_view bytes(int32_t id) const;
    bool usable(int32_t id) const { return id >= 0 && id < size_ && ((usable_[static_cast<size_t>(id) >> 5] >> (id & 31)) & 1); }
    const std::vector<uint32_t>& usable_mask() const { return usable_; }
    size_t usable_count() const { return usable_count_; }

    // The trie, preorder: node i reads byte[i] at depth[i] (1 for a token's first byte); its
    // subtree is [i, end[i]); the tokens ending at it are trie_tokens[tok[i], tok[i + 1]), so a
    // subtree's tokens are trie_tokens[tok[i], tok[end[i]]).
    std::vector<uint8_t> byte;
    std::vector<uint16_t> depth;
    std::vector<uint32_t> end;
    std::vector<uint32_t> tok;
    std::vector<int32_t> trie_tokens;
    int max_depth = 0;

private:
    int64_t size_ = 0;
    std::string data_;
    std::vector<uint32_t> offset_;  // id -> data_ range [offset_[id], offset_[id + 1])
    std::vector<uint32_t> usable_;
    size_t usable_count_ = 0;
};

}  // namespace radiance::grammar
