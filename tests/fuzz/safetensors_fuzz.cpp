// libFuzzer target: any bytes as a .safetensors file (a Hugging Face checkpoint's shard, read by
// rad-convert) either open or raise radiance::Error naming what is wrong, and each tensor the
// reader accepts lies inside the file and holds the bytes its shape and dtype say: every byte of
// it is read. A crash, another exception, a sanitizer report or a hang is a bug in the reader.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include <radiance/rad_types.h>

#include "radiance/convert/safetensors.h"
#include "radiance/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // the reader maps a path
    static const std::string path = "/tmp/safetensors_fuzz_" + std::to_string(getpid()) + ".safetensors";
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    try {
        const auto f = radiance::convert::SafetensorsFile::open(path);
        volatile uint8_t sink = 0;
        for (const auto& [name, t] : f->tensors()) {
            // the shape's bytes, without a product that wraps (a shape of 2^66 bytes once passed
            // as 0: tests/fuzz/regressions/safetensors_fuzz-shape-wraps)
            uint64_t bytes = static_cast<uint64_t>(rad_dtype_bits(t.dtype) / 8);
            for (int64_t d : t.shape)
                if (d < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes)) __builtin_trap();
            if (bytes != t.bytes) __builtin_trap();
            for (uint64_t b = 0; b < t.bytes; ++b) sink = sink ^ t.data[b];
        }
    } catch (const radiance::Error&) {
    }
    return 0;
}
