// added_vocabulary.h: added/special tokens ("added_tokens" of tokenizer.json). They are cut
// out of the text before the model runs: leftmost match first, the longest at that position,
// honouring lstrip/rstrip/single_word. Tokens with normalized=false are matched in the raw
// text, the others in the normalised text.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "regex.h"

namespace radiance::text {

struct AddedToken {
    int32_t id;
    std::string content;
    bool single_word = false;
    bool lstrip = false;
    bool rstrip = false;
    bool normalized = true;
    bool special = false;
};

// A byte trie over a set of strings with leftmost-longest matching.
class TokenMatcher {
public:
    void add(std::string_view s, int32_t value);
    bool empty() const { return nodes_.size() <= 1; }
    // Longest key starting at text[pos]: returns its length and sets value, or 0.
    size_t longest_at(std::string_view text, size_t pos, int32_t& value) const;
    // First position >= pos where a key may start (text.size() when none).
    size_t next_candidate(std::string_view text, size_t pos) const;

private:
    struct Node {
        int32_t value = -1;
        std::vector<std::pair<unsigned char, int32_t>> next;  // sorted by byte
    };
    std::vector<Node> nodes_ = std::vector<Node>(1);
    bool first_bytes_[256] = {};
    int distinct_first_bytes_ = 0;
    unsigned char only_first_byte_ = 0;  // when there is exactly one: found with memchr
};

// A piece of text after splitting: either an added token (token >= 0) or text to tokenize.
struct Segment {
    size_t start, end;
    int32_t token;  // index into AddedVocabulary::tokens(), -1 for plain text
};

class AddedVocabulary {
public:
    // normalize_fn gives the normalised form of a normalized=true token's content.
    template <class NormalizeFn>
    AddedVocabulary(std::vector<AddedToken> tokens, NormalizeFn normalize_fn);

    const std::vector<AddedToken>& tokens() const { return tokens_; }
    // The text a token is matched as: its content, normalised when normalized=true. Decoding
    // uses it too (as `tokenizers` >= 0.23 does).
    const std::string& match_form(size_t index) const { return match_forms_[index]; }
    // Splits on tokens matched in raw (normalized=false) or normalised text.
    void split(std::string_view text, bool normalized_pass, std::vector<Segment>& out) const;
    bool has_normalized_tokens() const { return !normalized_.empty(); }

private:
    void build();
    std::vector<AddedToken> tokens_;
    std::vector<std::string> match_forms_;  // the text each token is matched as
    TokenMatcher raw_, normalized_;
    std::unique_ptr<Regex> word_start_;  // a word character first (Rust's \w), for single_word
};

template <class NormalizeFn>
AddedVocabulary::AddedVocabulary(std::vector<AddedToken> tokens, NormalizeFn normalize_fn) : tokens_(std::move(tokens)) {
    for (const AddedToken& t : tokens_) match_forms_.push_back(t.normalized ? normalize_fn(t.content) : t.content);
    build();
}

}  // namespace radiance::text
