// libFuzzer target: any bytes as a GGUF file, through both of radiance's readers. rad-convert's
// (shared/convert/gguf_source.cpp: the metadata as a config, the vocabulary as a tokenizer.json,
// Llama 3.1 rope factors) either succeeds or raises radiance::Error naming what is wrong; libquant's
// (plugins/quant/libquant/gguf_file.cpp: the tensor directory) either parses or says why, and each
// tensor it accepts lies inside the file: every row of it is read (the block types unpacked) from
// libFuzzer's buffer, which is exactly the input's size, so ASan sees any read past it. A crash,
// another exception, a sanitizer report or a hang is a bug in a reader.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "ggml_blocks.h"
#include "gguf_file.h"
#include "radiance/convert/gguf_source.h"
#include "radiance/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // read_gguf_source reads a path (it reads only as much of a large file as its header needs)
    static const std::string path = "/tmp/gguf_fuzz_" + std::to_string(getpid()) + ".gguf";
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    try {
        const radiance::convert::GgufSource s = radiance::convert::read_gguf_source(path);
        (void)radiance::convert::gguf_recipe(path, s.config);
    } catch (const radiance::Error&) {
    }
    std::string err;
    const auto f = quant::GgufFile::parse(data, size, "fuzz.gguf", &err);
    if (!f) return 0;
    std::vector<int8_t> q;
    std::vector<float> sc, mn;
    volatile uint8_t sink = 0;
    for (const auto& [name, t] : f->tensors()) {
        if (!t.row_bytes) continue;  // a type the import refuses by name
        for (int64_t r = 0; r < t.rows; ++r) {
            const uint8_t* row = t.data + static_cast<uint64_t>(r) * t.row_bytes;
            if (quant::is_block_type(t.type)) {
                q.resize(static_cast<size_t>(t.cols));
                sc.resize(static_cast<size_t>(t.cols / 16 + 1));
                mn.resize(sc.size());
                quant::unpack_row(t.type, row, t.cols, q.data(), sc.data(), mn.data());
            } else {
                for (uint64_t b = 0; b < t.row_bytes; ++b) sink = sink ^ row[b];
            }
        }
    }
    return 0;
}
