#include "block_allocator.h"

namespace radiance::frontend {

void BlockAllocator::reset(int64_t blocks) {
    total_ = blocks;
    free_.clear();
    // Handed out from the low ids first (the back of the vector).
    for (int64_t b = blocks - 1; b >= 0; --b) free_.push_back(static_cast<int32_t>(b));
}

bool BlockAllocator::grow(std::vector<int32_t>& owned, int64_t need) {
    const int64_t more = need - static_cast<int64_t>(owned.size());
    if (more <= 0) return true;
    if (more > free_count()) return false;
    for (int64_t i = 0; i < more; ++i) {
        owned.push_back(free_.back());
        free_.pop_back();
    }
    return true;
}

void BlockAllocator::release(std::vector<int32_t>& owned) {
    for (auto it = owned.rbegin(); it != owned.rend(); ++it) free_.push_back(*it);
    owned.clear();
}

}  // namespace radiance::frontend
