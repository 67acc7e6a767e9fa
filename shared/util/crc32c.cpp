#include "radiance/util/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace radiance {
namespace {

// Slicing-by-8 tables: eight bytes per step keep multi-GB plane checks near memory speed.
struct Tables {
    std::array<std::array<uint32_t, 256>, 8> t{};
    Tables() {
        for (uint32_t i = 0; i < 256; ++i) {
            uint32_t c = i;
            for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
            t[0][i] = c;
        }
        for (uint32_t i = 0; i < 256; ++i)
            for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
    }
};
const Tables& tables() {
    static const Tables tb;
    return tb;
}

#if defined(__x86_64__)
// The SSE4.2 instruction computes the same polynomial 8 bytes a step at about 8 GB/s, 4-5 times
// the tables: writing or checking a 16 GB container's planes is then bound by the disk.
__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t crc, const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t c = ~crc & 0xffffffffu;
    while (n >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        c = _mm_crc32_u64(c, v);
        p += 8;
        n -= 8;
    }
    auto c32 = static_cast<uint32_t>(c);
    while (n--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}
const bool g_sse42 = __builtin_cpu_supports("sse4.2");
#endif

}  // namespace

uint32_t crc32c(uint32_t crc, const void* data, size_t n) {
#if defined(__x86_64__)
    if (g_sse42) return crc32c_sse42(crc, data, n);
#endif
    return crc32c_table(crc, data, n);
}

uint32_t crc32c_table(uint32_t crc, const void* data, size_t n) {
    const auto& t = tables().t;
    const auto* p = static_cast<const unsigned char*>(data);
    crc = ~crc;
    while (n >= 8) {
        uint32_t lo;
        uint32_t hi;
        std::memcpy(&lo, p, 4);
        std::memcpy(&hi, p + 4, 4);
        lo ^= crc;
        crc = t[7][lo & 0xff] ^ t[6][(lo >> 8) & 0xff] ^ t[5][(lo >> 16) & 0xff] ^ t[4][lo >> 24] ^ t[3][hi & 0xff] ^
              t[2][(hi >> 8) & 0xff] ^ t[1][(hi >> 16) & 0xff] ^ t[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
    return ~crc;
}

}  // namespace radiance
