// libFuzzer target: any bytes as a tokenizer.json, optionally followed by a NUL and a
// tokenizer_config.json (both come with a checkpoint from outside). Loading either succeeds or
// raises TokenizerError naming what is wrong; a tokenizer that loads encodes a short text (with
// and without special tokens) and decodes what it got. A crash, another exception, a sanitizer
// report or a hang is a bug in the tokenizer.
#include <cstdint>
#include <string_view>

#include "radiance/text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string_view in(reinterpret_cast<const char*>(data), size);
    const size_t nul = in.find('\0');
    const std::string_view tokenizer = in.substr(0, nul), config = nul == std::string_view::npos ? std::string_view() : in.substr(nul + 1);
    try {
        const auto tok = radiance::text::Tokenizer::from_json(tokenizer, config);
        for (bool special : {false, true}) {
            const auto ids = tok.encode("Hello, w\xc3\xb6rld!  12345 <s>x\n\ty", special);
            (void)tok.decode(ids, !special);
        }
    } catch (const radiance::text::TokenizerError&) {
    }
    return 0;
}
