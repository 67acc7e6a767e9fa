// libFuzzer target: any bytes given to the RAD2 reader either parse or raise radiance::Error.
// A crash, a sanitizer report or a hang is a bug in the reader.
#include <cstdint>
#include <vector>

#include "radiance/container/container.h"
#include "radiance/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        auto r = radiance::container::Reader::from_memory(std::vector<uint8_t>(data, data + size), "fuzz.rad");
        r->verify_planes();
        for (auto& t : r->tensors())
            for (size_t p = 0; p < t.planes.size(); ++p) {
                const uint8_t* d = r->plane_data(t, p);
                volatile uint8_t sink = 0;
                for (uint64_t i = 0; i < t.planes[p].bytes; i += 64) sink = sink ^ d[i];
            }
        (void)r->blob(radiance::container::Section::Tokenizer);
    } catch (const radiance::Error&) {
    }
    return 0;
}
