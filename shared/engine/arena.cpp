#include "arena.h"

#include <algorithm>
#include <numeric>

namespace radiance::engine {

uint64_t plan_arena(std::vector<ArenaItem>& items, uint64_t align) {
    std::vector<size_t> order(items.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return items[a].bytes > items[b].bytes; });
    std::vector<size_t> placed;
    uint64_t total = 0;
    for (size_t i : order) {
        ArenaItem& it = items[i];
        uint64_t size = (it.bytes + align - 1) / align * align;
        // Busy ranges of already placed buffers that are alive at the same time.
        std::vector<std::pair<uint64_t, uint64_t>> busy;
        for (size_t j : placed) {
            const ArenaItem& o = items[j];
            if (o.first <= it.last && it.first <= o.last) busy.emplace_back(o.offset, o.offset + (o.bytes + align - 1) / align * align);
        }
        std::sort(busy.begin(), busy.end());
        uint64_t off = 0;
        for (auto& [a, b] : busy) {
            if (off + size <= a) break;
            off = std::max(off, b);
        }
        it.offset = off;
        total = std::max(total, off + size);
        placed.push_back(i);
    }
    return total;
}

}  // namespace radiance::engine
