// block_allocator.h: KV cache blocks as the front end accounts for them. The workers own the
// memory; the front end owns which block holds what, so a restarted worker needs no state back.
#pragma once
#include <cstdint>
#include <vector>

namespace radiance::frontend {

class BlockAllocator {
public:
    explicit BlockAllocator(int64_t blocks = 0) { reset(blocks); }
    void reset(int64_t blocks);
    int64_t total() const { return total_; }
    int64_t free_count() const { return static_cast<int64_t>(free_.size()); }
    // Grows `owned` to `need` blocks; false (and nothing taken) when there are not enough.
    bool grow(std::vector<int32_t>& owned, int64_t need);
    void release(std::vector<int32_t>& owned);

private:
    int64_t total_ = 0;
    std::vector<int32_t> free_;
};

}  // namespace radiance::frontend
