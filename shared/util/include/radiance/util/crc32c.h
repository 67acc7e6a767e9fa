// crc32c.h: CRC-32C (Castagnoli), the container's section and plane checksum.
#pragma once
#include <cstddef>
#include <cstdint>

namespace radiance {

// Continues a running CRC: crc32c(crc32c(0, a), b) == crc32c(0, a ++ b).
uint32_t crc32c(uint32_t crc, const void* data, size_t n);
// The same by tables on any CPU (crc32c uses the SSE4.2 instruction where the CPU has it).
uint32_t crc32c_table(uint32_t crc, const void* data, size_t n);

}  // namespace radiance
