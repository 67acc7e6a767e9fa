#include "radiance/sampling/counter_rng.h"

namespace radiance::sampling {

namespace {

// The multipliers and Weyl key increments of Philox4x32 (from the paper).
constexpr uint32_t kMul0 = 0xD2511F53u;
constexpr uint32_t kMul1 = 0xCD9E8D57u;
constexpr uint32_t kWeyl0 = 0x9E3779B9u;
constexpr uint32_t kWeyl1 = 0xBB67AE85u;

inline void mul_hi_lo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
    const uint64_t p = static_cast<uint64_t>(a) * b;
    hi = static_cast<uint32_t>(p >> 32);
    lo = static_cast<uint32_t>(p);
}

inline PhiloxCounter round(const PhiloxCounter& c, const PhiloxKey& k) {
    uint32_t hi0, lo0, hi1, lo1;
    mul_hi_lo(kMul0, c[0], hi0, lo0);
    mul_hi_lo(kMul1, c[2], hi1, lo1);
    return {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
}

}  // namespace

PhiloxCounter philox4x32_10(PhiloxCounter counter, PhiloxKey key) {
    for (int r = 0; r < 10; ++r) {
        if (r > 0) {
            key[0] += kWeyl0;
            key[1] += kWeyl1;
        }
        counter = round(counter, key);
    }
    return counter;
}

double uniform_at(uint64_t seed, uint64_t position, uint32_t stream) {
    const PhiloxCounter out = philox4x32_10({static_cast<uint32_t>(position), static_cast<uint32_t>(position >> 32), stream, 0u},
                                            {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)});
    const uint64_t bits = (static_cast<uint64_t>(out[0]) << 32 | out[1]) >> 11;  // 53 bits
    return static_cast<double>(bits) * 0x1.0p-53;
}

}  // namespace radiance::sampling
