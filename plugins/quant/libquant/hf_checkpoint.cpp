#include "hf_checkpoint.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>

namespace quant {

int st_dtype_bytes(const std::string& d) {
    if (d == "F64" || d == "I64" || d == "U64") return 8;
    if (d == "F32" || d == "I32" || d == "U32") return 4;
    if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
    if (d == "F8_E4M3" || d == "F8_E5M2" || d == "I8" || d == "U8" || d == "BOOL") return 1;
    return 0;
}

struct HfLoader {
    // Maps one safetensors file and adds its tensors; false with `err` naming the file and why.
    static bool add_file(HfCheckpoint* ck, const std::string& path, std::string* err) {
        const int fd = ::open(path.c_str(), O_RDONLY);
        struct stat st {};
        if (fd < 0 || ::fstat(fd, &st) != 0) {
            if (fd >= 0) ::close(fd);
            *err = path + ": cannot be read";
            return false;
        }
        const uint64_t size = static_cast<uint64_t>(st.st_size);
        void* map = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
        ::close(fd);
        if (map == MAP_FAILED) {
            *err = path + ": cannot be mapped";
            return false;
        }
        // kept mapped for the process: the tensors point into it
        const auto* base = static_cast<const uint8_t*>(map);
        uint64_t hn = 0;
        if (size < 8 || (std::memcpy(&hn, base, 8), hn > size - 8)) {
            *err = path + ": not a safetensors file (its header size runs past the file)";
            return false;
        }
        auto h = nlohmann::json::parse(base + 8, base + 8 + hn, nullptr, false);
        if (h.is_discarded() || !h.is_object()) {
            *err = path + ": its safetensors header is not a JSON object";
            return false;
        }
        const uint64_t data0 = 8 + hn;
        for (auto& [name, v] : h.items()) {
            if (name == "__metadata__") continue;
            HfTensor t;
            t.name = name;
            t.file = path;
            if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets") || !v["dtype"].is_string() ||
                !v["shape"].is_array() || !v["data_offsets"].is_array() || v["data_offsets"].size() != 2) {
                *err = path + ": tensor '" + name + "' has a malformed header entry";
                return false;
            }
            t.dtype = v["dtype"].get<std::string>();
            uint64_t n = 1;
            for (auto& d : v["shape"]) {
                if (!d.is_number_integer() || d.get<int64_t>() < 0) {
                    *err = path + ": tensor '" + name + "' has a malformed shape";
                    return false;
                }
                t.shape.push_back(d.get<int64_t>());
                n *= static_cast<uint64_t>(t.shape.back());
            }
            const uint64_t a = v["data_offsets"][0].get<uint64_t>(), b = v["data_offsets"][1].get<uint64_t>();
            const int es = st_dtype_bytes(t.dtype);
            if (b < a || b > size - data0 || (es && b - a != n * static_cast<uint64_t>(es))) {
                *err = path + ": tensor '" + name + "''s data_offsets do not fit its shape or the file";
                return false;
            }
            t.data = base + data0 + a;
            t.bytes = b - a;
            ck->tensors_[name] = std::move(t);
        }
        return true;
    }
};

const HfCheckpoint* HfCheckpoint::open(const std::string& dir, std::string* err) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<HfCheckpoint>> cache;
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(dir); it != cache.end()) return it->second.get();
    namespace fs = std::filesystem;
    auto ck = std::make_unique<HfCheckpoint>();
    ck->dir_ = dir;
    // The files the converter reads (safetensors.cpp): the shards an index names, else
    // model.safetensors, else every *.safetensors (a fixture's golden.safetensors is no weight file).
    std::error_code ec;
    std::set<std::string> files;
    const fs::path index = fs::path(dir) / "model.safetensors.index.json";
    if (std::ifstream in(index); in) {
        auto j = nlohmann::json::parse(in, nullptr, false);
        if (j.is_discarded() || !j.contains("weight_map") || !j["weight_map"].is_object()) {
            *err = index.string() + ": not a safetensors index (no weight_map)";
            return nullptr;
        }
        for (auto& [name, file] : j["weight_map"].items())
            if (file.is_string()) files.insert((fs::path(dir) / file.get<std::string>()).string());
    } else if (fs::exists(fs::path(dir) / "model.safetensors", ec)) {
        files.insert((fs::path(dir) / "model.safetensors").string());
    } else {
        for (auto& e : fs::directory_iterator(dir, ec))
            if (e.path().extension() == ".safetensors") files.insert(e.path().string());
    }
    if (files.empty()) {
        *err = dir + ": no *.safetensors files";
        return nullptr;
    }
    for (auto& f : files)
        if (!HfLoader::add_file(ck.get(), f, err)) return nullptr;
    std::ifstream in(fs::path(dir) / "config.json");
    if (in) {
        auto cfg = nlohmann::json::parse(in, nullptr, false);
        if (!cfg.is_discarded() && cfg.is_object() && cfg.contains("quantization_config") && cfg["quantization_config"].is_object())
            ck->qc_ = cfg["quantization_config"];
    }
    return (cache[dir] = std::move(ck)).get();
}

const HfTensor* HfCheckpoint::find(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace quant
