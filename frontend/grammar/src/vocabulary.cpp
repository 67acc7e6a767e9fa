#include "radiance/grammar/vocabulary.h"

#include <algorithm>
#include <numeric>

#include "radiance/grammar/grammar.h"
#include "radiance/text/tokenizer.h"

namespace radiance::grammar {

namespace {
constexpr size_t kMaxTokenBytes = 4096;  // longer tokens (none in real vocabularies) are left out
}

std::string_view Vocabulary::bytes(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) + 1 >= offset_.size()) return {};
    return std::string_view(data_).substr(offset_[static_cast<size_t>(id)],
                                          offset_[static_cast<size_t>(id) + 1] - offset_[static_cast<size_t>(id)]);
}

std::shared_ptr<const Vocabulary> Vocabulary::build(const std::vector<std::string>& bytes, const std::vector<uint8_t>& usable,
                                                    int64_t mask_size) {
    auto v = std::make_shared<Vocabulary>();
    const size_t n = std::min<size_t>(bytes.size(), static_cast<size_t>(std::max<int64_t>(mask_size, 0)));
    v->size_ = mask_size;
    v->usable_.assign(v->words(), 0);
    v->offset_.push_back(0);
    std::vector<int32_t> ids;
    for (size_t i = 0; i < n; ++i) {
        v->data_ += bytes[i];
        v->offset_.push_back(static_cast<uint32_t>(v->data_.size()));
        if (i < usable.size() && usable[i] && !bytes[i].empty() && bytes[i].size() <= kMaxTokenBytes) {
            v->usable_[i >> 5] |= 1u << (i & 31);
            ids.push_back(static_cast<int32_t>(i));
        }
    }
    v->usable_count_ = ids.size();
    // Sorted by bytes, a token comes right after its prefixes: the trie's preorder.
    std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
        const auto x = v->bytes(a), y = v->bytes(b);
        return x < y || (x == y && a < b);
    });
    std::vector<uint32_t> open;  // the nodes on the current path, by depth - 1
    std::string_view prev;
    for (int32_t id : ids) {
        const std::string_view t = v->bytes(id);
        size_t common = 0;
        while (common < prev.size() && common < t.size() && prev[common] == t[common]) ++common;
        if (common > open.size()) common = open.size();
        while (open.size() > common) {  // close the nodes the path leaves
            v->end[open.back()] = static_cast<uint32_t>(v->byte.size());
            open.pop_back();
        }
        for (size_t k = common; k < t.size(); ++k) {
            open.push_back(static_cast<uint32_t>(v->byte.size()));
            v->byte.push_back(static_cast<uint8_t>(t[k]));
            v->depth.push_back(static_cast<uint16_t>(k + 1));
            v->end.push_back(0);
            v->tok.push_back(static_cast<uint32_t>(v->trie_tokens.size()));
        }
        v->trie_tokens.push_back(id);
        v->max_depth = std::max(v->max_depth, static_cast<int>(t.size()));
        prev = t;
    }
    while (!open.empty()) {
        v->end[open.back()] = static_cast<uint32_t>(v->byte.size());
        open.pop_back();
    }
    v->tok.push_back(static_cast<uint32_t>(v->trie_tokens.size()));
    return v;
}

std::shared_ptr<const Vocabulary> Vocabulary::from_tokenizer(const text::Tokenizer& t, int64_t mask_size) {
    const size_t n = t.vocab_size();
    std::vector<std::string> bytes(n);
    std::vector<uint8_t> usable(n, 0);
    for (size_t i = 0; i < n; ++i) {
        const auto id = static_cast<text::TokenId>(i);
        if (t.is_special(id)) continue;
        bytes[i] = t.token_bytes(id);
        usable[i] = 1;
    }
    return build(bytes, usable, mask_size > 0 ? mask_size : static_cast<int64_t>(n));
}

}  // namespace radiance::grammar
