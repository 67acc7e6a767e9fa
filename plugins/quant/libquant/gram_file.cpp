// gram_file.cpp: DIR/index.txt and one DIR/gram_N.bin (gram_file.h).
#include "gram_file.h"

#include <cstring>
#include <fstream>
#include <sstream>

namespace quant {

std::string gram_file_of(const std::string& dir, const std::string& name) {
    std::ifstream in(dir + "/index.txt");
    std::string file;
    for (std::string line; std::getline(in, line);) {
        std::istringstream words(line);
        std::string n, f;
        if (words >> n >> f && n == name) file = f;
    }
    return file;
}

bool read_gram(const std::string& dir, const std::string& name, Gram* out, std::string* why) {
    const std::string index = dir + "/index.txt";
    if (!std::ifstream(index)) return *why = "calib=" + dir + ": no " + index + " (not a calibration tap's folder, or its run did not finish)", false;
    const std::string file = gram_file_of(dir, name);
    if (file.empty())
        return *why = "calib=" + dir + " has no Gram matrix for weight '" + name +
                      "' (the calibration run never saw a plain projection read it: a fused or routed op hides its input)",
               false;
    const std::string path = dir + "/" + file;
    std::ifstream g(path, std::ios::binary);
    char magic[8] = {};
    uint64_t head[2] = {};
    if (!g || !g.read(magic, 8) || std::memcmp(magic, "RADGRAM1", 8) != 0 || !g.read(reinterpret_cast<char*>(head), sizeof head))
        return *why = path + " (weight '" + name + "'): not a Gram matrix file (no RADGRAM1 header)", false;
    if (head[0] == 0 || head[0] > (uint64_t{1} << 17))
        return *why = path + " (weight '" + name + "'): K = " + std::to_string(head[0]) + " is not a row width", false;
    out->K = static_cast<int64_t>(head[0]);
    out->tokens = static_cast<int64_t>(head[1]);
    out->g.resize(static_cast<size_t>(out->K * out->K));
    if (!g.read(reinterpret_cast<char*>(out->g.data()), static_cast<std::streamsize>(out->g.size() * sizeof(double))))
        return *why = path + " (weight '" + name + "'): shorter than its " + std::to_string(out->K) + " x " + std::to_string(out->K) +
                      " matrix",
               false;
    return true;
}

}  // namespace quant
