// crc32c: the known check value, continuation, and the SSE4.2 path against the tables.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <vector>

#include "radiance/util/crc32c.h"

using radiance::crc32c;
using radiance::crc32c_table;

TEST_CASE("crc32c: the standard check value and continuation across any split", "[crc32c]") {
    const char* check = "123456789";
    CHECK(crc32c(0, check, 9) == 0xE3069283u);  // CRC-32C's published check value
    CHECK(crc32c_table(0, check, 9) == 0xE3069283u);
    CHECK(crc32c(0, nullptr, 0) == 0u);
    std::vector<unsigned char> data(1000);
    std::mt19937 rng(5);
    for (auto& b : data) b = static_cast<unsigned char>(rng());
    const uint32_t whole = crc32c(0, data.data(), data.size());
    for (size_t cut : {0u, 1u, 7u, 8u, 9u, 500u, 999u, 1000u})
        CHECK(crc32c(crc32c(0, data.data(), cut), data.data() + cut, data.size() - cut) == whole);
}

TEST_CASE("crc32c: the dispatched path equals the tables at every length and alignment", "[crc32c]") {
    std::vector<unsigned char> data(4096 + 16);
    std::mt19937 rng(11);
    for (auto& b : data) b = static_cast<unsigned char>(rng());
    for (size_t off = 0; off < 9; ++off)
        for (size_t n : {0u, 1u, 3u, 8u, 15u, 16u, 63u, 64u, 1000u, 4096u}) {
            INFO("offset " << off << ", " << n << " bytes");
            CHECK(crc32c(0x1234u, data.data() + off, n) == crc32c_table(0x1234u, data.data() + off, n));
        }
}
