// stream_decoder.h: incremental detokenisation for generated tokens.
//
// Feed ids one at a time; each step returns the text that became final. Text is held back
// while it could still change: an incomplete UTF-8 character, a run of byte-fallback tokens
// (<0xNN>) that is not finished, trailing U+FFFD that more bytes may turn into a character.
// The concatenation of every step() result and flush() equals
// Tokenizer::decode(all ids, skip_special_tokens).
#pragma once
#include <string>
#include <vector>

#include "radiance/text/tokenizer.h"

namespace radiance::text {

class StreamDecoder {
public:
    explicit StreamDecoder(Tokenizer tokenizer, bool skip_special_tokens = false);

    std::string step(TokenId id);
    // Returns everything still held back and starts over.
    std::string flush();
    void reset();

private:
    Tokenizer tokenizer_;
    bool skip_special_;
    std::vector<TokenId> window_;   // ids whose text is not yet all emitted, plus context
    size_t emitted_ = 0;            // bytes of decode(window_) already returned
    bool continuation_ = false;     // window_ does not start at the beginning of the stream
};

}  // namespace radiance::text
