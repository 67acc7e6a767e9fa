// added_vocabulary.cpp: matching added tokens in text, with the `tokenizers` library's
// lstrip/rstrip/single_word rules (AddedVocabulary::find_matches).
#include "added_vocabulary.h"

#include <algorithm>
#include <cstring>

#include "unicode.h"

namespace radiance::text {

void TokenMatcher::add(std::string_view s, int32_t value) {
    if (s.empty()) return;
    auto first = static_cast<unsigned char>(s[0]);
    if (!first_bytes_[first]) {
        first_bytes_[first] = true;
        ++distinct_first_bytes_;
        only_first_byte_ = first;
    }
    int32_t node = 0;
    for (char ch : s) {
        auto b = static_cast<unsigned char>(ch);
        auto& next = nodes_[node].next;
        auto it = std::lower_bound(next.begin(), next.end(), b,
                                   [](const std::pair<unsigned char, int32_t>& e, unsigned char k) { return e.first < k; });
        if (it != next.end() && it->first == b) {
            node = it->second;
        } else {
            int32_t fresh = static_cast<int32_t>(nodes_.size());
            next.insert(it, {b, fresh});
            nodes_.emplace_back();  // invalidates `next`; not used after this
            node = fresh;
        }
    }
    nodes_[node].value = value;
}

size_t TokenMatcher::next_candidate(std::string_view text, size_t pos) const {
    if (distinct_first_bytes_ == 1) {
        const void* hit = std::memchr(text.data() + pos, only_first_byte_, text.size() - pos);
        return hit ? static_cast<size_t>(static_cast<const char*>(hit) - text.data()) : text.size();
    }
    while (pos < text.size() && !first_bytes_[static_cast<unsigned char>(text[pos])]) ++pos;
    return pos;
}

size_t TokenMatcher::longest_at(std::string_view text, size_t pos, int32_t& value) const {
    size_t best = 0;
    int32_t node = 0;
    for (size_t i = pos; i < text.size(); ++i) {
        auto b = static_cast<unsigned char>(text[i]);
        const auto& next = nodes_[node].next;
        auto it = std::lower_bound(next.begin(), next.end(), b,
                                   [](const std::pair<unsigned char, int32_t>& e, unsigned char k) { return e.first < k; });
        if (it == next.end() || it->first != b) break;
        node = it->second;
        if (nodes_[node].value >= 0) {
            best = i + 1 - pos;
            value = nodes_[node].value;
        }
    }
    return best;
}

void AddedVocabulary::build() {
    for (size_t i = 0; i < tokens_.size(); ++i) {
        if (tokens_[i].content.empty()) continue;  // the library ignores empty tokens
        (tokens_[i].normalized ? normalized_ : raw_).add(match_forms_[i], static_cast<int32_t>(i));
    }
    bool any_single_word = std::any_of(tokens_.begin(), tokens_.end(), [](const AddedToken& t) { return t.single_word; });
    if (any_single_word) word_start_ = std::make_unique<Regex>("^[" + std::string(kRustWordClass) + "]", false);
}

namespace {

// Start of the whitespace run that ends s (s.size() when none).
size_t trailing_space_start(std::string_view s) {
    size_t end = s.size();
    while (end > 0) {
        size_t start = end - 1;
        while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
        size_t i = start;
        if (!unicode::is_whitespace(unicode::next_code_point(s, i))) break;
        end = start;
    }
    return end;
}

// Length of the whitespace run that starts s.
size_t leading_space_length(std::string_view s) {
    size_t i = 0;
    while (i < s.size()) {
        size_t next = i;
        if (!unicode::is_whitespace(unicode::next_code_point(s, next))) break;
        i = next;
    }
    return i;
}

std::string_view last_char(std::string_view s) {
    size_t start = s.size() - 1;
    while (start > 0 && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80) --start;
    return s.substr(start);
}

}  // namespace

void AddedVocabulary::split(std::string_view text, bool normalized_pass, std::vector<Segment>& out) const {
    const TokenMatcher& matcher = normalized_pass ? normalized_ : raw_;
    if (text.empty()) return;
    if (matcher.empty()) {
        out.push_back({0, text.size(), -1});
        return;
    }
    auto is_word_char = [this](std::string_view ch) { return word_start_->search(ch); };
    size_t start_offset = 0;
    size_t pos = 0;
    while ((pos = matcher.next_candidate(text, pos)) < text.size()) {
        int32_t index = -1;
        size_t length = matcher.longest_at(text, pos, index);
        if (length == 0) {
            ++pos;
            continue;
        }
        size_t start = pos, stop = pos + length;
        pos = stop;
        const AddedToken& token = tokens_[index];
        if (token.single_word) {
            bool space_before = start == 0 || !is_word_char(last_char(text.substr(0, start)));
            bool space_after =
                stop == text.size() || !is_word_char(text.substr(stop, unicode::sequence_length(static_cast<unsigned char>(text[stop]))));
            if (!space_before || !space_after) continue;
        }
        if (token.lstrip) start = std::max(trailing_space_start(text.substr(0, start)), start_offset);
        if (token.rstrip) {
            stop += leading_space_length(text.substr(stop));
            pos = stop;
        }
        if (start_offset < start) out.push_back({start_offset, start, -1});
        out.push_back({start, stop, index});
        start_offset = stop;
    }
    if (start_offset != text.size()) out.push_back({start_offset, text.size(), -1});
}

}  // namespace radiance::text
