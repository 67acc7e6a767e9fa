// tokenizer.cpp: the encode/decode pipeline (added tokens -> normalizer -> pre-tokenizer ->
// model -> post-processor; ids -> token strings -> decoder) and the public accessors.
#include <algorithm>
#include <array>
#include <unordered_set>

#include "byte_level.h"
#include "radiance/text/tokenizer.h"
#include "tokenizer_impl.h"
#include "unicode.h"

namespace radiance::text {
namespace detail {

void TokenizerImpl::finish() {
    id_space = model->id_space();
    for (const AddedToken& t : added->tokens()) id_space = std::max(id_space, static_cast<size_t>(t.id) + 1);
    added_index.assign(id_space, -1);
    special.assign(id_space, false);
    const auto& tokens = added->tokens();
    for (size_t i = 0; i < tokens.size(); ++i) added_index[tokens[i].id] = static_cast<int32_t>(i);
    // The library skips a token in decode when its string is one of the special contents.
    std::unordered_set<std::string_view> special_contents;
    for (const AddedToken& t : tokens) {
        added_by_content[t.content] = t.id;  // a later duplicate wins, as in the library's map
        if (t.special) special_contents.insert(t.content);
    }
    for (size_t k = 0; k < tokens.size(); ++k)
        if (special_contents.count(added->match_form(k))) special[tokens[k].id] = true;
    for (std::string_view c : special_contents) {
        int32_t model_id = model->token_to_id(c);
        if (model_id >= 0 && added_index[model_id] < 0) special[model_id] = true;
    }
}

const std::string* TokenizerImpl::token_string(TokenId id) const {
    if (id < 0 || static_cast<size_t>(id) >= id_space) return nullptr;
    if (added_index[id] >= 0) return &added->match_form(added_index[id]);
    return model->id_to_token(id);
}

std::optional<TokenId> TokenizerImpl::token_to_id(std::string_view token) const {
    if (auto it = added_by_content.find(std::string(token)); it != added_by_content.end()) return it->second;
    int32_t id = model->token_to_id(token);
    return id >= 0 ? std::optional<TokenId>(id) : std::nullopt;
}

namespace {

// One piece of normalised text through the pre-tokenizer and the model.
void tokenize_piece(const TokenizerImpl& t, std::string_view text, bool at_input_start, PieceList& pieces, std::vector<TokenId>& out) {
    if (text.empty()) return;
    if (t.byte_level_split) {
        thread_local std::vector<Match> matches;
        matches.clear();
        t.byte_level_split->find_all(text, matches);
        size_t prev = 0;
        for (const Match& m : matches) {
            t.model->encode_byte_level(text.substr(prev, m.start - prev), out);
            t.model->encode_byte_level(text.substr(m.start, m.end - m.start), out);
            prev = m.end;
        }
        t.model->encode_byte_level(text.substr(prev), out);
        return;
    }
    if (!t.pre_tokenizer) {
        t.model->encode(text, out);
        return;
    }
    pieces.assign(text, at_input_start);
    t.pre_tokenizer->pre_tokenize(pieces);
    for (const auto& p : pieces.pieces) t.model->encode(pieces.view(p), out);
}

}  // namespace

void TokenizerImpl::encode_raw(std::string_view text, std::vector<TokenId>& out) const {
    std::string repaired;
    if (!unicode::is_valid_utf8(text)) {
        unicode::append_lossy(repaired, text);
        text = repaired;
    }
    std::vector<Segment> segments, inner;
    added->split(text, false, segments);
    PieceList pieces;
    std::string normalized;
    const auto& tokens = added->tokens();
    for (const Segment& seg : segments) {
        if (seg.token >= 0) {
            out.push_back(tokens[seg.token].id);
            continue;
        }
        std::string_view piece = text.substr(seg.start, seg.end - seg.start);
        bool at_start = seg.start == 0;
        if (normalizer) {
            normalized.assign(piece);
            normalizer->normalize(normalized);
            piece = normalized;
        }
        if (!added->has_normalized_tokens()) {
            tokenize_piece(*this, piece, at_start, pieces, out);
            continue;
        }
        inner.clear();
        added->split(piece, true, inner);
        for (const Segment& sub : inner) {
            if (sub.token >= 0)
                out.push_back(tokens[sub.token].id);
            else
                tokenize_piece(*this, piece.substr(sub.start, sub.end - sub.start), at_start && sub.start == 0, pieces, out);
        }
    }
}

std::vector<TokenId> TokenizerImpl::post_process(std::vector<std::vector<TokenId>> encodings, bool add_special_tokens) const {
    if (post_processor) post_processor->process(encodings, add_special_tokens);
    std::vector<TokenId> out = std::move(encodings[0]);
    for (size_t i = 1; i < encodings.size(); ++i) out.insert(out.end(), encodings[i].begin(), encodings[i].end());
    return out;
}

std::string TokenizerImpl::decode(std::span<const TokenId> ids, bool skip_special_tokens, bool continuation) const {
    std::vector<std::string> strings;
    strings.reserve(ids.size());
    for (TokenId id : ids) {
        const std::string* s = token_string(id);
        if (!s || (skip_special_tokens && special[id])) continue;
        strings.push_back(*s);
    }
    return run_decoder(decoder.get(), std::move(strings), continuation);
}

}  // namespace detail

std::vector<TokenId> Tokenizer::encode(std::string_view text, bool add_special_tokens) const {
    std::vector<std::vector<TokenId>> encodings(1);
    impl_->encode_raw(text, encodings[0]);
    return impl_->post_process(std::move(encodings), add_special_tokens);
}

std::vector<TokenId> Tokenizer::encode_pair(std::string_view first, std::string_view second, bool add_special_tokens) const {
    std::vector<std::vector<TokenId>> encodings(2);
    impl_->encode_raw(first, encodings[0]);
    impl_->encode_raw(second, encodings[1]);
    return impl_->post_process(std::move(encodings), add_special_tokens);
}

std::string Tokenizer::decode(std::span<const TokenId> ids, bool skip_special_tokens) const {
    return impl_->decode(ids, skip_special_tokens, false);
}

bool is_valid_utf8(std::string_view bytes) { return unicode::is_valid_utf8(bytes); }

std::string Tokenizer::token_bytes(TokenId id, bool skip_special_tokens) const {
    const std::string* s = impl_->token_string(id);
    if (!s || (skip_special_tokens && impl_->special[id])) return {};
    const DecoderTraits& traits = impl_->decoder_traits;
    if (traits.byte_fallback) {
        const int b = byte_fallback_value(*s);
        if (b >= 0) return std::string(1, static_cast<char>(b));
    }
    if (traits.byte_level) {
        // As the ByteLevel decoder: a token with a character outside the byte alphabet (an
        // added token written in plain text) stands for its own UTF-8.
        std::string bytes;
        for (size_t i = 0; i < s->size();) {
            const int b = byte_level::byte_for_char(unicode::next_code_point(*s, i));
            if (b < 0) return *s;
            bytes.push_back(static_cast<char>(b));
        }
        return bytes;
    }
    const std::array<TokenId, 1> one{id};
    return impl_->decode(one, skip_special_tokens, /*continuation=*/true);
}

size_t Tokenizer::vocab_size() const { return impl_->id_space; }

std::optional<TokenId> Tokenizer::token_to_id(std::string_view token) const { return impl_->token_to_id(token); }

std::optional<std::string> Tokenizer::id_to_token(TokenId id) const {
    const std::string* s = impl_->token_string(id);
    return s ? std::optional<std::string>(*s) : std::nullopt;
}

bool Tokenizer::is_special(TokenId id) const { return id >= 0 && static_cast<size_t>(id) < impl_->id_space && impl_->special[id]; }

std::vector<TokenId> Tokenizer::special_token_ids() const {
    std::vector<TokenId> out;
    for (size_t id = 0; id < impl_->id_space; ++id)
        if (impl_->special[id]) out.push_back(static_cast<TokenId>(id));
    return out;
}

std::vector<AddedTokenInfo> Tokenizer::added_tokens() const {
    std::vector<AddedTokenInfo> out;
    for (const AddedToken& t : impl_->added->tokens()) out.push_back({t.id, t.content, t.special});
    std::sort(out.begin(), out.end(), [](const AddedTokenInfo& a, const AddedTokenInfo& b) { return a.id < b.id; });
    return out;
}

std::optional<TokenId> Tokenizer::bos_id() const { return impl_->bos_id; }
std::optional<TokenId> Tokenizer::eos_id() const { return impl_->eos_id; }
std::optional<std::string> Tokenizer::bos_token() const { return impl_->bos_token; }
std::optional<std::string> Tokenizer::eos_token() const { return impl_->eos_token; }

}  // namespace radiance::text
