#include "token_tables.h"

#include <algorithm>
#include <bit>
#include <cstring>

namespace radiance::grammar {

void TokenSet::write(std::span<uint32_t> words, const std::vector<uint32_t>& usable) const {
    switch (kind) {
    case Kind::Bits: std::memcpy(words.data(), data.data(), words.size() * 4); break;
    case Kind::List:
        std::memset(words.data(), 0, words.size() * 4);
        for (uint32_t id : data) words[id >> 5] |= 1u << (id & 31);
        break;
    case Kind::Complement:
        std::memcpy(words.data(), usable.data(), words.size() * 4);
        for (uint32_t id : data) words[id >> 5] &= ~(1u << (id & 31));
        break;
    }
}

void TokenSet::add(std::span<uint32_t> words, const std::vector<uint32_t>& usable) const {
    switch (kind) {
    case Kind::Bits:
        for (size_t i = 0; i < words.size(); ++i) words[i] |= data[i];
        break;
    case Kind::List:
        for (uint32_t id : data) words[id >> 5] |= 1u << (id & 31);
        break;
    case Kind::Complement: {
        // usable minus the listed ids, merged word by word (the list is sorted)
        size_t k = 0;
        for (size_t i = 0; i < words.size(); ++i) {
            uint32_t w = usable[i];
            while (k < data.size() && (data[k] >> 5) == i) w &= ~(1u << (data[k++] & 31));
            words[i] |= w;
        }
        break;
    }
    }
}

TokenWalker::TokenWalker(const Automaton& a, const Vocabulary& v)
    : a_(a), v_(v), at_(static_cast<size_t>(v.max_depth) + 2), alt_(static_cast<size_t>(v.max_depth) + 2), bits_(v.words()) {}

StateTokens TokenWalker::classify(int32_t state) {
    StateTokens out;
    std::fill(bits_.begin(), bits_.end(), 0);
    size_t n_acc = 0;
    const auto n = static_cast<uint32_t>(v_.byte.size());
    const uint8_t* byte = v_.byte.data();
    const uint16_t* depth = v_.depth.data();
    const uint32_t* end = v_.end.data();
    const uint32_t* tok = v_.tok.data();
    const int32_t* ids = v_.trie_tokens.data();
    at_[0] = state;
    alt_[0] = 0;
    if (a_.has_bytes[state]) {
        for (uint32_t i = 0; i < n;) {
            const uint16_t d = depth[i];
            const int32_t q = at_[d - 1];
            const uint8_t b = byte[i];
            const bool exit = d > 1 && a_.exits[q].has(b);
            const int32_t q2 = a_.step(q, b);
            if (q2 < 0) {
                if (alt_[d - 1] || exit) out.uncertain.insert(out.uncertain.end(), ids + tok[i], ids + tok[end[i]]);
                i = end[i];
                continue;
            }
            at_[d] = q2;
            alt_[d] = alt_[d - 1] | static_cast<uint8_t>(exit);
            for (uint32_t k = tok[i]; k < tok[i + 1]; ++k) {
                bits_[static_cast<uint32_t>(ids[k]) >> 5] |= 1u << (ids[k] & 31);
                ++n_acc;
            }
            ++i;
        }
    }
    std::sort(out.uncertain.begin(), out.uncertain.end());
    // The smallest form: ids, the usable ids left out, or the bits.
    const size_t words = bits_.size(), n_rej = v_.usable_count() - n_acc;
    auto& s = out.accepted;
    if (n_acc <= words && n_acc <= n_rej) {
        s.kind = TokenSet::Kind::List;
        for (size_t w = 0; w < words; ++w)
            for (uint32_t m = bits_[w]; m; m &= m - 1) s.data.push_back(static_cast<uint32_t>(w * 32 + std::countr_zero(m)));
    } else if (n_rej <= words) {
        s.kind = TokenSet::Kind::Complement;
        const auto& usable = v_.usable_mask();
        for (size_t w = 0; w < words; ++w)
            for (uint32_t m = usable[w] & ~bits_[w]; m; m &= m - 1) s.data.push_back(static_cast<uint32_t>(w * 32 + std::countr_zero(m)));
    } else {
        s.kind = TokenSet::Kind::Bits;
        s.data = bits_;
    }
    return out;
}

}  // namespace radiance::grammar
