// arena.h: places transient buffers in one arena so that buffers whose lives (op index intervals)
// do not overlap share bytes. Greedy by size, lowest free offset: simple and close to optimal for
// the chain-shaped graphs decoders declare.
#pragma once
#include <cstdint>
#include <vector>

namespace radiance::engine {

struct ArenaItem {
    uint64_t bytes = 0;
    int first = 0, last = 0;  // inclusive live interval
    uint64_t offset = 0;      // output
};

// Assigns offsets (aligned to `align`) and returns the arena size.
uint64_t plan_arena(std::vector<ArenaItem>& items, uint64_t align = 256);

}  // namespace radiance::engine
