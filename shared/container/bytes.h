// bytes.h: little-endian field access for the container's records (internal).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

namespace radiance::container::bytes {

inline uint32_t u32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline uint64_t u64(const uint8_t* p) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
inline int64_t i64(const uint8_t* p) {
    int64_t v;
    std::memcpy(&v, p, 8);
    return v;
}
inline double f64(const uint8_t* p) {
    double v;
    std::memcpy(&v, p, 8);
    return v;
}

inline void put_u32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
inline void put_u64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
inline void put_i64(std::string& s, int64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
inline void put_f64(std::string& s, double v) { s.append(reinterpret_cast<const char*>(&v), 8); }
// A fixed-width, NUL-padded name field.
inline void put_name(std::string& s, const char* name, size_t width) {
    size_t n = strnlen(name, width);
    s.append(name, n);
    s.append(width - n, '\0');
}

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the container reader assumes a little-endian host");

}  // namespace radiance::container::bytes
