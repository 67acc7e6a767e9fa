// Writes safetensors_fuzz's seed corpus into a folder: small .safetensors files the reader
// accepts (tensors of several dtypes and ranks, a scalar, an empty tensor, __metadata__).
#include <cstdint>
#include <fstream>
#include <string>

namespace {

void write(const std::string& path, const std::string& header, size_t data_bytes) {
    std::string out(8, '\0');
    const uint64_t n = header.size();
    for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>(n >> (8 * i));
    out += header;
    for (size_t i = 0; i < data_bytes; ++i) out += static_cast<char>(i * 31 + 7);
    std::ofstream(path, std::ios::binary) << out;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const std::string d = argv[1];
    write(d + "/two.safetensors",
          R"({"__metadata__":{"format":"pt"},"a.weight":{"dtype":"BF16","shape":[4,8],"data_offsets":[0,64]},)"
          R"("a.bias":{"dtype":"F32","shape":[4],"data_offsets":[64,80]}})",
          80);
    write(d + "/kinds.safetensors",
          R"({"s":{"dtype":"F16","shape":[],"data_offsets":[0,2]},"e":{"dtype":"I64","shape":[0,3],"data_offsets":[2,2]},)"
          R"("q":{"dtype":"I32","shape":[2,2,2],"data_offsets":[2,34]},"f8":{"dtype":"F8_E4M3","shape":[16],"data_offsets":[34,50]},)"
          R"("b":{"dtype":"BOOL","shape":[3],"data_offsets":[50,53]}})",
          53);
    return 0;
}
