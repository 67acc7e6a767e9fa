// bpe_model.cpp: BPE encoding of one word with a heap of candidate merges over a linked list
// of symbols, and a per-thread cache of words already encoded.
#include "bpe_model.h"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "byte_level.h"
#include "json_util.h"
#include "tokenizer_json_reader.h"
#include "radiance/text/tokenizer.h"
#include "unicode.h"

namespace radiance::text {
namespace {

constexpr size_t kMaxCachedWord = 255;                   // longer words are rare and not worth keeping
constexpr size_t kCutAtMetaspaceAbove = 48;              // shorter words gain nothing from cutting
constexpr std::string_view kMetaspace = "\xE2\x96\x81";  // U+2581 "▁"

std::atomic<uint64_t> next_instance_id{1};

struct Symbol {
    int32_t id;
    int32_t prev, next;
    uint32_t len;  // bytes covered; 0 once merged into its left neighbour
};

struct Candidate {
    uint32_t rank;
    int32_t pos;
    int32_t merged;
    int32_t left, right;  // the pair this candidate was made for
};

// Heap order: the lowest rank on top, then the leftmost position.
struct CandidateOrder {
    bool operator()(const Candidate& a, const Candidate& b) const { return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos; }
};

struct ThreadScratch {
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap;
    std::vector<MergeMap::Value> pairs;
    std::string text, mapped;
    uint64_t cache_owner = 0;
    WordCache cache;
};

ThreadScratch& scratch() {
    thread_local ThreadScratch s;
    return s;
}

// The calling thread's word cache for one model and one kind of key (mapped text or raw
// bytes). One cache per thread: switching models starts it afresh.
WordCache& cache_for(uint64_t owner) {
    ThreadScratch& s = scratch();
    if (s.cache_owner != owner) {
        s.cache.clear();
        s.cache_owner = owner;
    }
    return s.cache;
}

void add_symbol(std::vector<Symbol>& sym, int32_t id, uint32_t len) {
    int32_t n = static_cast<int32_t>(sym.size());
    if (n > 0) sym.back().next = n;
    sym.push_back({id, n - 1, -1, len});
}

}  // namespace

BpeModel::BpeModel(std::vector<std::pair<std::string, int32_t>> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
                   Options options)
    : options_(std::move(options)), instance_id_(next_instance_id.fetch_add(1)) {
    // Ids index a table as long as the largest: one of 77,777,779 in a 10-token vocabulary asked
    // for 2.5 GB (tokenizer_fuzz). The largest vocabularies served are ~262k tokens (Gemma 3).
    constexpr int32_t kMaxId = 1 << 22;
    int32_t max_id = -1;
    for (const auto& [token, id] : vocab) {
        if (id < 0) throw TokenizerError("negative id for token \"" + token + "\"");
        if (id >= kMaxId)
            throw TokenizerError("id " + std::to_string(id) + " for token \"" + token + "\" is past " + std::to_string(kMaxId) +
                                 ": no vocabulary is that large");
        max_id = std::max(max_id, id);
    }
    tokens_.assign(static_cast<size_t>(max_id + 1), std::string());
    has_token_.assign(tokens_.size(), false);
    vocab_.reserve(vocab.size());
    for (auto& [token, id] : vocab) {
        vocab_.set(token, id);
        tokens_[id] = std::move(token);
        has_token_[id] = true;
    }

    merges_.reserve(merges.size());
    size_t prefix_len = options_.continuing_subword_prefix.size();
    std::string merged;
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const auto& [a, b] = merges[rank];
        int32_t a_id = vocab_.find(a), b_id = vocab_.find(b);
        if (a_id < 0) throw TokenizerError("merge token \"" + a + "\" is not in the vocabulary");
        if (b_id < 0) throw TokenizerError("merge token \"" + b + "\" is not in the vocabulary");
        merged.assign(a).append(b, std::min(prefix_len, b.size()), std::string::npos);
        int32_t m_id = vocab_.find(merged);
        if (m_id < 0) throw TokenizerError("merged token \"" + merged + "\" is not in the vocabulary");
        merges_.set(a_id, b_id, {static_cast<uint32_t>(rank), m_id});
    }

    if (options_.unk_token) unk_id_ = vocab_.find(*options_.unk_token);
    all_byte_fallback_ = true;
    byte_level_complete_ = true;
    for (int b = 0; b < 256; ++b) {
        byte_level_ids_[b] = vocab_.find(byte_level::char_for_byte(static_cast<uint8_t>(b)));
        byte_level_complete_ = byte_level_complete_ && byte_level_ids_[b] >= 0;
        char c = static_cast<char>(b);
        single_byte_ids_[b] = vocab_.find(std::string_view(&c, 1));
        char name[8];
        std::snprintf(name, sizeof(name), "<0x%02X>", b);
        byte_fallback_ids_[b] = vocab_.find(name);
        all_byte_fallback_ = all_byte_fallback_ && byte_fallback_ids_[b] >= 0;
    }

    bool crossing = false;
    for (size_t id = 0; id < tokens_.size() && !crossing; ++id) {
        const std::string& t = tokens_[id];
        for (size_t at = t.find(kMetaspace, 1); at != std::string::npos; at = t.find(kMetaspace, at + 1)) {
            if (at < kMetaspace.size() || t.compare(at - kMetaspace.size(), kMetaspace.size(), kMetaspace) != 0) {
                crossing = true;
                break;
            }
        }
    }
    cut_before_metaspace_ =
        !crossing && !options_.ignore_merges && options_.continuing_subword_prefix.empty() && options_.end_of_word_suffix.empty();
}

int32_t BpeModel::char_id(std::string_view ch, bool first, bool last) const {
    if (options_.continuing_subword_prefix.empty() && options_.end_of_word_suffix.empty())
        return ch.size() == 1 ? single_byte_ids_[static_cast<unsigned char>(ch[0])] : vocab_.find(ch);
    std::string& s = scratch().text;
    s.clear();
    if (!first) s.append(options_.continuing_subword_prefix);
    s.append(ch);
    if (last) s.append(options_.end_of_word_suffix);
    return vocab_.find(s);
}

void BpeModel::encode(std::string_view word, std::vector<int32_t>& out) const {
    if (word.empty()) return;
    if (!cut_before_metaspace_ || word.size() <= kCutAtMetaspaceAbove) {
        encode_one(word, out);
        return;
    }
    size_t start = 0;
    for (size_t at = word.find(kMetaspace, 1); at != std::string_view::npos; at = word.find(kMetaspace, at + kMetaspace.size())) {
        bool after_metaspace = at >= kMetaspace.size() && word.compare(at - kMetaspace.size(), kMetaspace.size(), kMetaspace) == 0;
        if (after_metaspace || at == start) continue;
        encode_one(word.substr(start, at - start), out);
        start = at;
    }
    encode_one(word.substr(start), out);
}

void BpeModel::encode_one(std::string_view word, std::vector<int32_t>& out) const {
    if (options_.ignore_merges) {
        int32_t id = vocab_.find(word);
        if (id >= 0) {
            out.push_back(id);
            return;
        }
    }
    if (word.size() > kMaxCachedWord) {
        encode_uncached(word, out);
        return;
    }
    WordCache& cache = cache_for(instance_id_ * 2);
    uint64_t h = hash_bytes(word);
    if (cache.lookup(word, h, out)) return;
    size_t before = out.size();
    encode_uncached(word, out);
    cache.insert(word, h, out.data() + before, out.size() - before);
}

void BpeModel::encode_byte_level(std::string_view raw, std::vector<int32_t>& out) const {
    if (raw.empty()) return;
    bool cached = raw.size() <= kMaxCachedWord;
    WordCache* cache = cached ? &cache_for(instance_id_ * 2 + 1) : nullptr;
    uint64_t h = cached ? hash_bytes(raw) : 0;
    if (cached && cache->lookup(raw, h, out)) return;
    size_t before = out.size();
    std::string& mapped = scratch().mapped;
    mapped.clear();
    byte_level::append_encoded(mapped, raw);
    int32_t whole = options_.ignore_merges ? vocab_.find(mapped) : -1;
    if (whole >= 0) {
        out.push_back(whole);
    } else if (byte_level_complete_ && options_.continuing_subword_prefix.empty() && options_.end_of_word_suffix.empty()) {
        // One symbol per byte, straight from the table.
        std::vector<Symbol>& sym = scratch().symbols;
        sym.clear();
        for (char c : raw) add_symbol(sym, byte_level_ids_[static_cast<unsigned char>(c)], 1);
        merge(out);
    } else {
        encode_uncached(mapped, out);
    }
    if (cached) cache->insert(raw, h, out.data() + before, out.size() - before);
}

void BpeModel::encode_uncached(std::string_view word, std::vector<int32_t>& out) const {
    std::vector<Symbol>& sym = scratch().symbols;
    sym.clear();
    auto add = [&sym](int32_t id, uint32_t len) { add_symbol(sym, id, len); };

    // Pending unknown token (id, bytes), fused with following unknowns when fuse_unk is set.
    bool unk_pending = false;
    uint32_t unk_len = 0;
    for (size_t i = 0; i < word.size();) {
        size_t n = unicode::sequence_length(static_cast<unsigned char>(word[i]));
        std::string_view ch = word.substr(i, n);
        bool first = i == 0, last = i + n >= word.size();
        i += n;
        int32_t id = char_id(ch, first, last);
        if (id >= 0) {
            if (unk_pending) {
                add(unk_id_, unk_len);
                unk_pending = false;
            }
            add(id, static_cast<uint32_t>(n));
            continue;
        }
        if (options_.byte_fallback) {
            // The bytes of the character as the vocabulary would spell it (with affixes).
            std::string spelled;
            if (!first) spelled.append(options_.continuing_subword_prefix);
            spelled.append(ch);
            if (last) spelled.append(options_.end_of_word_suffix);
            bool all = true;
            for (char c : spelled) all = all && byte_fallback_ids_[static_cast<unsigned char>(c)] >= 0;
            if (all) {
                for (char c : spelled) add(byte_fallback_ids_[static_cast<unsigned char>(c)], 1);
                continue;
            }
        }
        if (!options_.unk_token) continue;  // the library drops the character silently
        if (unk_id_ < 0) throw TokenizerError("unk_token \"" + *options_.unk_token + "\" is not in the vocabulary");
        if (unk_pending && options_.fuse_unk) {
            unk_len += static_cast<uint32_t>(n);
        } else {
            if (unk_pending) add(unk_id_, unk_len);
            unk_pending = true;
            unk_len = static_cast<uint32_t>(n);
        }
    }
    if (unk_pending) add(unk_id_, unk_len);
    merge(out);
}

void BpeModel::merge(std::vector<int32_t>& out) const {
    std::vector<Symbol>& sym = scratch().symbols;
    if (sym.size() > options_.heap_above)
        merge_with_heap();
    else if (sym.size() > 1)
        merge_linear();
    for (const Symbol& s : sym)
        if (s.len != 0) out.push_back(s.id);
}

// Short words: keep each pair's merge next to its left symbol and scan for the best one.
// No heap, and each merge costs two lookups (the new pairs on either side).
void BpeModel::merge_linear() const {
    ThreadScratch& scr = scratch();
    std::vector<Symbol>& sym = scr.symbols;
    std::vector<MergeMap::Value>& pair = scr.pairs;  // pair[i]: merge of i and its right neighbour
    static constexpr MergeMap::Value kNone{UINT32_MAX, -1};
    auto lookup = [this](int32_t a, int32_t b) {
        const MergeMap::Value* m = merges_.find(a, b);
        return m ? *m : kNone;
    };
    pair.resize(sym.size());
    for (size_t k = 0; k + 1 < sym.size(); ++k) pair[k] = lookup(sym[k].id, sym[k + 1].id);
    pair.back() = kNone;
    for (;;) {
        int32_t best = -1;
        uint32_t best_rank = UINT32_MAX;
        for (int32_t i = 0; i >= 0; i = sym[i].next) {
            if (pair[i].rank < best_rank) {  // strict: the leftmost wins ties
                best_rank = pair[i].rank;
                best = i;
            }
        }
        if (best < 0) return;
        Symbol& left = sym[best];
        Symbol& right = sym[left.next];
        left.id = pair[best].merged;
        left.len += right.len;
        left.next = right.next;
        right.len = 0;
        if (left.next >= 0) {
            sym[left.next].prev = best;
            pair[best] = lookup(left.id, sym[left.next].id);
        } else {
            pair[best] = kNone;
        }
        if (left.prev >= 0) pair[left.prev] = lookup(sym[left.prev].id, left.id);
    }
}

// Long words: a heap of candidate merges, lowest rank first, then leftmost. Entries go stale
// when a neighbour merges; they remember the pair they were made for to notice.
void BpeModel::merge_with_heap() const {
    ThreadScratch& scr = scratch();
    std::vector<Symbol>& sym = scr.symbols;
    std::vector<Candidate>& heap = scr.heap;
    heap.clear();
    for (size_t k = 0; k + 1 < sym.size(); ++k)
        if (const MergeMap::Value* m = merges_.find(sym[k].id, sym[k + 1].id))
            heap.push_back({m->rank, static_cast<int32_t>(k), m->merged, sym[k].id, sym[k + 1].id});
    CandidateOrder order;
    std::make_heap(heap.begin(), heap.end(), order);
    auto push = [&](int32_t pos, int32_t a, int32_t b) {
        if (const MergeMap::Value* m = merges_.find(a, b)) {
            heap.push_back({m->rank, pos, m->merged, a, b});
            std::push_heap(heap.begin(), heap.end(), order);
        }
    };
    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), order);
        Candidate top = heap.back();
        heap.pop_back();
        Symbol& left = sym[top.pos];
        if (left.len == 0 || left.next < 0 || left.id != top.left) continue;
        Symbol& right = sym[left.next];
        if (right.id != top.right) continue;  // stale: the pair changed since
        left.id = top.merged;
        left.len += right.len;
        left.next = right.next;
        right.len = 0;
        if (left.next >= 0) sym[left.next].prev = top.pos;
        if (left.prev >= 0) push(left.prev, sym[left.prev].id, left.id);
        if (left.next >= 0) push(top.pos, left.id, sym[left.next].id);
    }
}

namespace {

BpeModel::Options parse_options(const nlohmann::json& j, size_t heap_above) {
    std::string type = json_util::get_string(j, "type", "BPE");
    if (type != "BPE") throw TokenizerError("unsupported model type \"" + type + "\" (only BPE is implemented)");
    BpeModel::Options o;
    if (auto it = j.find("unk_token"); it != j.end() && it->is_string()) o.unk_token = it->get<std::string>();
    o.continuing_subword_prefix = json_util::get_string(j, "continuing_subword_prefix");
    o.end_of_word_suffix = json_util::get_string(j, "end_of_word_suffix");
    o.fuse_unk = json_util::get_bool(j, "fuse_unk", false);
    o.byte_fallback = json_util::get_bool(j, "byte_fallback", false);
    o.ignore_merges = json_util::get_bool(j, "ignore_merges", false);
    o.heap_above = heap_above;
    // "dropout" is training-time randomness; encoding here is always deterministic.
    return o;
}

}  // namespace

BpeModel parse_bpe_model(const nlohmann::json& j, size_t heap_above) {
    BpeModel::Options options = parse_options(j, heap_above);
    const auto& vocab_json = json_util::require(j, "vocab", "BPE model");
    if (!vocab_json.is_object()) throw TokenizerError("BPE model: \"vocab\" must be an object");
    std::vector<std::pair<std::string, int32_t>> vocab;
    vocab.reserve(vocab_json.size());
    for (auto it = vocab_json.begin(); it != vocab_json.end(); ++it) vocab.emplace_back(it.key(), json_util::get_id(*it, "a BPE vocabulary id"));

    std::vector<std::pair<std::string, std::string>> merges;
    if (auto it = j.find("merges"); it != j.end() && !it->is_null()) {
        merges.reserve(it->size());
        for (const auto& m : *it) {
            if (m.is_array() && m.size() == 2)
                merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
            else
                merges.push_back(split_merge_line(m.get<std::string>()));
        }
    }
    return BpeModel(std::move(vocab), merges, std::move(options));
}

BpeModel build_bpe_model(const nlohmann::json& j, std::vector<std::pair<std::string, int32_t>> vocab,
                         const std::vector<std::pair<std::string, std::string>>& merges) {
    return BpeModel(std::move(vocab), merges, parse_options(j, BpeModel::Options{}.heap_above));
}

}  // namespace radiance::text
