// flat_maps.h: open-addressing hash maps for the hot lookups (vocabulary, merge ranks, the
// word cache). std::unordered_map's node allocations and pointer chasing cost more than the
// BPE work itself on cache hits.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace radiance::text {

inline uint64_t hash_bytes(std::string_view s) {
    // FNV-1a over 8-byte words, then a final mix: fast for the short strings we hash.
    uint64_t h = 0xcbf29ce484222325ULL ^ s.size();
    size_t i = 0;
    for (; i + 8 <= s.size(); i += 8) {
        uint64_t w;
        std::memcpy(&w, s.data() + i, 8);
        h = (h ^ w) * 0x100000001b3ULL;
        h ^= h >> 29;
    }
    uint64_t tail = 0;
    if (s.size() > i) std::memcpy(&tail, s.data() + i, s.size() - i);
    h = (h ^ tail) * 0x9E3779B97F4A7C15ULL;
    h ^= h >> 32;
    return h;
}

inline uint64_t mix64(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdULL;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ULL;
    k ^= k >> 33;
    return k;
}

// string -> int32 value; keys are copied into one arena.
class StringIdMap {
public:
    void reserve(size_t n) { rehash(capacity_for(n)); }

    // Inserts or overwrites.
    void set(std::string_view key, int32_t value) {
        if ((size_ + 1) * 4 > slots_.size() * 3) rehash(slots_.empty() ? 64 : slots_.size() * 2);
        uint64_t h = hash_bytes(key);
        size_t mask = slots_.size() - 1;
        for (size_t i = h & mask;; i = (i + 1) & mask) {
            Slot& s = slots_[i];
            if (s.value == kEmpty) {
                s = {h, static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(key.size()), value};
                arena_.append(key);
                ++size_;
                return;
            }
            if (s.hash == h && key_of(s) == key) {
                s.value = value;
                return;
            }
        }
    }

    // Returns -1 when absent.
    int32_t find(std::string_view key) const {
        if (slots_.empty()) return -1;
        uint64_t h = hash_bytes(key);
        size_t mask = slots_.size() - 1;
        for (size_t i = h & mask;; i = (i + 1) & mask) {
            const Slot& s = slots_[i];
            if (s.value == kEmpty) return -1;
            if (s.hash == h && key_of(s) == key) return s.value;
        }
    }

    size_t size() const { return size_; }

private:
    static constexpr int32_t kEmpty = INT32_MIN;
    struct Slot {
        uint64_t hash = 0;
        uint32_t offset = 0, length = 0;
        int32_t value = kEmpty;
    };
    static size_t capacity_for(size_t n) {
        size_t c = 64;
        while (c * 3 < n * 4 + 4) c *= 2;
        return c;
    }
    std::string_view key_of(const Slot& s) const { return {arena_.data() + s.offset, s.length}; }
    void rehash(size_t capacity) {
        if (capacity <= slots_.size()) return;
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(capacity, Slot{});
        size_t mask = capacity - 1;
        for (const Slot& s : old) {
            if (s.value == kEmpty) continue;
            size_t i = s.hash & mask;
            while (slots_[i].value != kEmpty) i = (i + 1) & mask;
            slots_[i] = s;
        }
    }
    std::vector<Slot> slots_;
    std::string arena_;
    size_t size_ = 0;
};

// (left id, right id) -> (rank, merged id).
class MergeMap {
public:
    struct Value {
        uint32_t rank;
        int32_t merged;
    };
    void reserve(size_t n) {
        size_t c = 64;
        while (c * 3 < n * 4 + 4) c *= 2;
        slots_.assign(c, Slot{});
        size_ = 0;
    }
    // Inserts or overwrites (a later duplicate merge wins, like the library's HashMap).
    void set(int32_t a, int32_t b, Value v) {
        if ((size_ + 1) * 4 > slots_.size() * 3) grow();
        uint64_t key = pack(a, b);
        size_t mask = slots_.size() - 1;
        for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
            Slot& s = slots_[i];
            if (s.key == kEmptyKey) {
                s = {key, v};
                ++size_;
                return;
            }
            if (s.key == key) {
                s.value = v;
                return;
            }
        }
    }
    const Value* find(int32_t a, int32_t b) const {
        uint64_t key = pack(a, b);
        size_t mask = slots_.size() - 1;
        for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
            const Slot& s = slots_[i];
            if (s.key == key) return &s.value;
            if (s.key == kEmptyKey) return nullptr;
        }
    }
    size_t size() const { return size_; }

private:
    static constexpr uint64_t kEmptyKey = ~uint64_t{0};
    struct Slot {
        uint64_t key = kEmptyKey;
        Value value{};
    };
    static uint64_t pack(int32_t a, int32_t b) { return (uint64_t{static_cast<uint32_t>(a)} << 32) | static_cast<uint32_t>(b); }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
        size_ = 0;
        for (const Slot& s : old)
            if (s.key != kEmptyKey) set(static_cast<int32_t>(s.key >> 32), static_cast<int32_t>(s.key), s.value);
    }
    std::vector<Slot> slots_ = std::vector<Slot>(64);
    size_t size_ = 0;
};

// word -> ids, for words already encoded. Bounded: cleared when full. Slots are 16 bytes and
// the table grows with use, so the part a text touches stays in cache; most words are one
// token, kept in the slot itself.
class WordCache {
public:
    explicit WordCache(size_t max_entries = 1 << 16) : max_entries_(max_entries) {}

    // Returns false when absent; otherwise appends the ids to out.
    bool lookup(std::string_view word, uint64_t h, std::vector<int32_t>& out) const {
        if (slots_.empty()) return false;
        auto h32 = static_cast<uint32_t>(h);
        size_t mask = slots_.size() - 1;
        for (size_t i = h32 & mask;; i = (i + 1) & mask) {
            const Slot& s = slots_[i];
            if (s.id_count == 0) return false;
            if (s.hash == h32 && s.key_length == word.size() && std::memcmp(keys_.data() + s.key_offset, word.data(), word.size()) == 0) {
                if (s.id_count == 1)
                    out.push_back(s.ids);
                else
                    out.insert(out.end(), ids_.begin() + s.ids, ids_.begin() + s.ids + s.id_count);
                return true;
            }
        }
    }

    // Words longer than 64 KiB or without ids are not kept.
    void insert(std::string_view word, uint64_t h, const int32_t* ids, size_t n) {
        if (n == 0 || n > UINT16_MAX || word.size() > UINT16_MAX) return;
        if (size_ >= max_entries_) clear();
        if ((size_ + 1) * 2 > slots_.size()) grow();
        Slot s{static_cast<uint32_t>(h), static_cast<uint32_t>(keys_.size()), static_cast<uint16_t>(word.size()), static_cast<uint16_t>(n),
               ids[0]};
        if (n > 1) {
            s.ids = static_cast<int32_t>(ids_.size());
            ids_.insert(ids_.end(), ids, ids + n);
        }
        keys_.append(word);
        place(s);
        ++size_;
    }

    void clear() {
        slots_.clear();
        keys_.clear();
        ids_.clear();
        size_ = 0;
    }

private:
    struct Slot {
        uint32_t hash = 0;
        uint32_t key_offset = 0;
        uint16_t key_length = 0;
        uint16_t id_count = 0;  // 0: empty slot
        int32_t ids = 0;        // the id itself when id_count == 1, else an offset into ids_
    };
    void place(const Slot& s) {
        size_t mask = slots_.size() - 1;
        size_t i = s.hash & mask;
        while (slots_[i].id_count != 0) i = (i + 1) & mask;
        slots_[i] = s;
    }
    void grow() {
        std::vector<Slot> old = std::move(slots_);
        slots_.assign(old.empty() ? 1024 : old.size() * 2, Slot{});
        for (const Slot& s : old)
            if (s.id_count != 0) place(s);
    }
    std::vector<Slot> slots_;
    std::string keys_;
    std::vector<int32_t> ids_;
    size_t size_ = 0;
    size_t max_entries_;
};

}  // namespace radiance::text
