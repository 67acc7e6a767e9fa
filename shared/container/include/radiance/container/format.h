// format.h: the RAD2 byte layout (docs/container.md is the prose version of this file).
// All integers are little-endian. Records are written field by field, never as struct images,
// so the file format does not depend on a compiler's struct layout.
#pragma once
#include <cstdint>

namespace radiance::container {

inline constexpr char kMagic[8] = {'R', 'A', 'D', '2', '\r', '\n', '\x1a', '\n'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kHeaderBytes = 64;
inline constexpr uint32_t kSectionEntryBytes = 32;
inline constexpr uint32_t kMetaEntryBytes = 16;
inline constexpr uint32_t kEncodingBytes = 568;  // 24 + 24 + 4 + 4 + 8 * 64
inline constexpr uint32_t kPlaneDescBytes = 64;  // 24 + 4 + 4 + 4 * 8
inline constexpr uint32_t kTensorBytes = 64;
inline constexpr uint32_t kPlaneRefBytes = 24;
inline constexpr uint64_t kPlanesAlign = 4096;  // the PLANES section starts on a page
inline constexpr uint64_t kPlaneAlign = 256;    // each plane starts on 256 bytes: usable in place

enum class Section : uint32_t {
    Strings = 1,
    Meta = 2,
    Encodings = 3,
    Tensors = 4,
    Planes = 5,
    Tokenizer = 6,        // tokenizer.json bytes
    ChatTemplate = 7,     // the Jinja chat template text
    Recipe = 8,           // how the container was made (text)
    TokenizerConfig = 9,  // tokenizer_config.json bytes
};

// Section flag bits.
inline constexpr uint32_t kSectionRequired = 1;  // a reader that does not know the kind must refuse
inline constexpr uint32_t kSectionNoCrc = 2;     // checked per plane instead (PLANES)

enum class MetaType : uint32_t { Int = 1, F64 = 2, Str = 3, Bool = 4 };

const char* section_name(uint32_t kind);

}  // namespace radiance::container
