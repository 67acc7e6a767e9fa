#include "embedding_vectors.h"

#include <cmath>
#include <cstring>

namespace radiance::frontend {

std::vector<float> finish_embedding(const std::vector<float>& pooled, int64_t dims, bool normalize) {
    const size_t n = dims > 0 && static_cast<size_t>(dims) < pooled.size() ? static_cast<size_t>(dims) : pooled.size();
    std::vector<float> v(pooled.begin(), pooled.begin() + static_cast<std::ptrdiff_t>(n));
    if (!normalize) return v;
    double ss = 0;  // in double: the norm of a 4096-wide vector in float loses the last bits
    for (float x : v) ss += static_cast<double>(x) * x;
    if (ss <= 0) return v;
    const double inv = 1.0 / std::sqrt(ss);
    for (float& x : v) x = static_cast<float>(x * inv);
    return v;
}

std::string embedding_base64(const std::vector<float>& v) {
    static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string bytes(v.size() * 4, '\0');
    for (size_t i = 0; i < v.size(); ++i) {
        uint32_t u;
        std::memcpy(&u, &v[i], 4);
        for (int b = 0; b < 4; ++b) bytes[i * 4 + b] = static_cast<char>((u >> (8 * b)) & 0xff);  // little-endian on any host
    }
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    for (size_t i = 0; i < bytes.size(); i += 3) {
        const size_t k = std::min<size_t>(3, bytes.size() - i);
        uint32_t w = 0;
        for (size_t j = 0; j < 3; ++j) w = (w << 8) | (j < k ? static_cast<unsigned char>(bytes[i + j]) : 0u);
        for (size_t j = 0; j < 4; ++j) out += j <= k ? kAlphabet[(w >> (18 - 6 * j)) & 0x3f] : '=';
    }
    return out;
}

}  // namespace radiance::frontend
