// tokenizer_test_util.h: shared helpers for the tokenizer tests: the reference tokenizers
// (loaded once per process) and a generator of random, valid UTF-8 text.
#pragma once
#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "radiance/text/tokenizer.h"
#include "radiance/util/utf8.h"

namespace tokenizer_test {

inline std::string shared_dir() { return RAD_SHARED_DIR; }

// qwen3, llama3, mistral (tokenizer.json + tokenizer_config.json) or gpt2 (encoder.json).
inline const radiance::text::Tokenizer& reference(const std::string& name, bool fast_paths = true) {
    static std::map<std::pair<std::string, bool>, radiance::text::Tokenizer> loaded;
    auto key = std::make_pair(name, fast_paths);
    auto it = loaded.find(key);
    if (it != loaded.end()) return it->second;
    std::string dir = shared_dir() + "/tokenizers/" + name;
    radiance::text::LoadOptions options;
    options.fast_paths = fast_paths;
    radiance::text::Tokenizer t =
        name == "gpt2" ? radiance::text::Tokenizer::from_gpt2_files(dir + "/encoder.json", dir + "/vocab.bpe")
                       : radiance::text::Tokenizer::from_file(dir + "/tokenizer.json", dir + "/tokenizer_config.json", options);
    return loaded.emplace(key, std::move(t)).first->second;
}

using radiance::util::append_utf8;

// Random text mixing the kinds of characters that stress a tokenizer: ASCII words and
// punctuation, all sorts of whitespace and control characters, accented Latin and combining
// marks, CJK, Hangul syllables and jamo, emoji with ZWJ/skin tones/flags, other scripts'
// digits, compatibility characters, and any code point at all.
inline std::string random_text(std::mt19937& rng, size_t max_code_points = 120) {
    struct Range {
        char32_t lo, hi;
    };
    static const Range ranges[] = {
        {'a', 'z'},         {'A', 'Z'},         {'0', '9'},       {' ', '/'},       {':', '@'},
        {0x00, 0x1F},       {0x7F, 0x9F},       {0xA0, 0x24F},    {0x300, 0x36F},   {0x1AB0, 0x1AFF},
        {0x4E00, 0x9FFF},   {0x3040, 0x30FF},   {0xAC00, 0xD7A3}, {0x1100, 0x11FF}, {0x1F300, 0x1FAFF},
        {0x1F1E6, 0x1F1FF}, {0x1F3FB, 0x1F3FF}, {0x200B, 0x200F}, {0x2000, 0x200A}, {0x660, 0x669},
        {0xFF10, 0xFF19},   {0xFB00, 0xFB06},   {0x0900, 0x097F}, {0x0E00, 0x0E7F}, {0x10000, 0x10FFFF},
    };
    static const char32_t specials[] = {' ',    ' ',    ' ',    '\n',   '\t',   '\r',   0x85, 0xA0,  0x1680,
                                        0x180E, 0x2028, 0x3000, 0x200D, 0xFE0F, 0x2581, '\'', 0xFFFD};
    std::uniform_int_distribution<size_t> length(0, max_code_points);
    std::uniform_int_distribution<int> pick(0, 9);
    std::string out;
    size_t n = length(rng);
    for (size_t i = 0; i < n; ++i) {
        char32_t cp;
        if (pick(rng) < 3) {
            cp = specials[std::uniform_int_distribution<size_t>(0, std::size(specials) - 1)(rng)];
        } else {
            const Range& r = ranges[std::uniform_int_distribution<size_t>(0, std::size(ranges) - 1)(rng)];
            cp = std::uniform_int_distribution<char32_t>(r.lo, r.hi)(rng);
        }
        if (cp >= 0xD800 && cp < 0xE000) cp = 'x';  // surrogates are not characters
        append_utf8(out, cp);
    }
    return out;
}

}  // namespace tokenizer_test
