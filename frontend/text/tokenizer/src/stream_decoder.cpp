// stream_decoder.cpp: decodes a window of recent ids and returns the part of its text that
// can no longer change. Once everything decoded has been returned, the window restarts and
// later windows are decoded as a continuation (no start-of-text rules), which keeps each step
// cheap and the concatenation equal to a full decode.
#include "radiance/text/stream_decoder.h"

#include "tokenizer_impl.h"

namespace radiance::text {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

StreamDecoder::StreamDecoder(Tokenizer tokenizer, bool skip_special_tokens)
    : tokenizer_(std::move(tokenizer)), skip_special_(skip_special_tokens) {}

void StreamDecoder::reset() {
    window_.clear();
    emitted_ = 0;
    continuation_ = false;
}

std::string StreamDecoder::step(TokenId id) {
    const detail::TokenizerImpl& impl = tokenizer_.impl();
    const std::string* token = impl.token_string(id);
    if (!token || (skip_special_ && impl.special[id])) return {};  // decode() ignores these too
    window_.push_back(id);
    const DecoderTraits& traits = impl.decoder_traits;
    // A run of byte tokens is decoded as a whole (valid UTF-8 or one U+FFFD per byte), so it
    // is only final once a token of another kind follows.
    if (traits.byte_fallback && byte_fallback_value(*token) >= 0) return {};
    if (!traits.stream_safe) return {};  // text may change anywhere: everything comes at flush()

    std::string text = impl.decode(window_, skip_special_, continuation_);
    // Trailing U+FFFD may be an incomplete character that the next bytes complete.
    size_t stable = text.size();
    while (stable >= kReplacement.size() &&
           std::string_view(text).substr(stable - kReplacement.size()) == kReplacement)
        stable -= kReplacement.size();
    std::string out;
    if (stable > emitted_) {
        out = text.substr(emitted_, stable - emitted_);
        emitted_ = stable;
    }
    // Everything decoded is out and the start-of-text rules are settled: restart the window.
    // A decoder that strips the end could still give back trailing text, so it keeps all ids.
    if (emitted_ == text.size() && emitted_ > 0 && !traits.strips_end) {
        window_.clear();
        emitted_ = 0;
        continuation_ = true;
    }
    return out;
}

std::string StreamDecoder::flush() {
    std::string text = tokenizer_.impl().decode(window_, skip_special_, continuation_);
    std::string out = text.size() > emitted_ ? text.substr(emitted_) : std::string();
    reset();
    return out;
}

}  // namespace radiance::text
