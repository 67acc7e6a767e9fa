// pre_tokenizers.h: the "pre_tokenizer" stage: cutting normalised text into the words the
// model sees (Split with the file's regex, ByteLevel, Metaspace, Digits, Sequence, ...).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "radiance/text/tokenizer.h"

namespace radiance::text {

// Words as spans of one buffer, so splitting never copies text; only stages that rewrite
// text (ByteLevel, Metaspace) build a new buffer.
struct PieceList {
    struct Piece {
        size_t offset, length;
        bool at_input_start;  // begins at offset 0 of the text given to encode
    };
    std::string text;
    std::vector<Piece> pieces;

    std::string_view view(const Piece& p) const { return {text.data() + p.offset, p.length}; }
    void assign(std::string_view s, bool at_input_start) {
        text.assign(s);
        pieces.clear();
        if (!s.empty()) pieces.push_back({0, s.size(), at_input_start});
    }
};

// The split GPT-2 (and ByteLevel with use_regex) applies before mapping bytes.
inline constexpr std::string_view kGpt2Pattern = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

class PreTokenizer {
public:
    virtual ~PreTokenizer() = default;
    virtual void pre_tokenize(PieceList& list) const = 0;
};

std::unique_ptr<PreTokenizer> parse_pre_tokenizer(const nlohmann::json& j);

}  // namespace radiance::text
