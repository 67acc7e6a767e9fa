// decoders.h: the "decoder" stage: token strings back to text (ByteLevel, ByteFallback, Fuse,
// Strip, Replace, Metaspace, Sequence).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace radiance::text {

class Decoder {
public:
    virtual ~Decoder() = default;
    // continuation: tokens do not start the text (the stream decoder decodes windows); the
    // rules for the first token (Metaspace) and the start of the text (Strip) are then off.
    virtual void decode_chain(std::vector<std::string>& tokens, bool continuation) const = 0;
};

// What the stream decoder must know about a decoder chain.
struct DecoderTraits {
    bool byte_fallback = false;  // <0xNN> runs are only final once a non-byte token follows
    bool strips_end = false;     // a Strip with stop > 0: text may grow back at the end
    bool stream_safe = true;     // false: a Replace may match across tokens after they are joined
    bool byte_level = false;     // a ByteLevel stage: token characters stand for raw bytes
};

std::unique_ptr<Decoder> parse_decoder(const nlohmann::json& j, DecoderTraits& traits);

// Decodes with an optional decoder; without one the library joins tokens with spaces.
std::string run_decoder(const Decoder* decoder, std::vector<std::string> tokens, bool continuation);

// "<0xNN>" -> NN, or -1.
int byte_fallback_value(const std::string& token);

}  // namespace radiance::text
