// token_order.h: the one ordering every selection uses, so results never depend on how a
// sort or selection algorithm breaks ties: higher value first, then the lower id.
#pragma once
#include <cstdint>
#include <span>

namespace radiance::sampling::detail {

struct MoreLikely {
    std::span<const float> value;
    bool operator()(int32_t a, int32_t b) const {
        const float va = value[static_cast<size_t>(a)], vb = value[static_cast<size_t>(b)];
        return va > vb || (va == vb && a < b);
    }
};

}  // namespace radiance::sampling::detail
