#include "radiance/container/container.h"

#include <sstream>

namespace radiance::container {

const char* section_name(uint32_t kind) {
    switch (static_cast<Section>(kind)) {
    case Section::Strings: return "STRINGS";
    case Section::Meta: return "META";
    case Section::Encodings: return "ENCODINGS";
    case Section::Tensors: return "TENSORS";
    case Section::Planes: return "PLANES";
    case Section::Tokenizer: return "TOKENIZER";
    case Section::ChatTemplate: return "CHAT_TEMPLATE";
    case Section::Recipe: return "RECIPE";
    case Section::TokenizerConfig: return "TOKENIZER_CONFIG";
    }
    return "UNKNOWN";
}

std::string MetaValue::to_string() const {
    switch (type) {
    case MetaType::Int: return std::to_string(i);
    case MetaType::Bool: return i ? "true" : "false";
    case MetaType::F64: {
        std::ostringstream os;
        os.precision(17);
        os << f;
        return os.str();
    }
    case MetaType::Str: return s;
    }
    return s;
}

int64_t TensorInfo::rows() const {
    int64_t r = 1;
    for (size_t i = 0; i + 1 < shape.size(); ++i) r *= shape[i];
    return r;
}
int64_t TensorInfo::cols() const { return shape.empty() ? 1 : shape.back(); }

uint64_t expected_plane_bytes(const RadEncoding& e, size_t plane, int64_t rows, int64_t cols) {
    if (plane >= static_cast<size_t>(e.n_planes) || plane >= RAD_MAX_PLANES) return 0;
    return rad_plane_bytes(&e.planes[plane], rows, cols);
}

}  // namespace radiance::container
