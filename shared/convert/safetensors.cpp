#include "radiance/convert/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include <radiance/rad_types.h>

#include "radiance/util/error.h"

namespace radiance::convert {
namespace {

int dtype_of(const std::string& s) {
    if (s == "F32") return RAD_F32;
    if (s == "F16") return RAD_F16;
    if (s == "BF16") return RAD_BF16;
    if (s == "F64") return RAD_F64;
    if (s == "I32") return RAD_I32;
    if (s == "I64") return RAD_I64;
    if (s == "I16") return RAD_I16;
    if (s == "I8") return RAD_I8;
    if (s == "U8" || s == "BOOL") return RAD_U8;
    if (s == "F8_E4M3") return RAD_FP8_E4M3;
    if (s == "F8_E5M2") return RAD_FP8_E5M2;
    return 0;
}

}  // namespace

SafetensorsFile::~SafetensorsFile() {
    if (map_) munmap(map_, size_);
}

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        ::close(fd);
        throw Error(path + ": cannot stat: " + std::strerror(errno));
    }
    std::unique_ptr<SafetensorsFile> f(new SafetensorsFile());
    f->size_ = static_cast<uint64_t>(st.st_size);
    if (f->size_ < 8) {
        ::close(fd);
        throw Error(path + ": too short to be a safetensors file");
    }
    void* m = mmap(nullptr, f->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw Error(path + ": mmap failed: " + std::strerror(errno));
    f->map_ = m;
    const uint8_t* base = static_cast<const uint8_t*>(m);
    uint64_t hlen;
    std::memcpy(&hlen, base, 8);
    if (hlen > f->size_ - 8) throw Error(path + ": header length " + std::to_string(hlen) + " runs past the file");
    auto j = nlohmann::json::parse(base + 8, base + 8 + hlen, nullptr, false);
    if (j.is_discarded() || !j.is_object()) throw Error(path + ": header is not a JSON object");
    const uint64_t data_start = 8 + hlen, data_size = f->size_ - data_start;
    for (auto& [name, v] : j.items()) {
        if (name == "__metadata__") {
            if (v.is_object())
                for (auto& [k, mv] : v.items())
                    if (mv.is_string()) f->metadata_[k] = mv.get<std::string>();
            continue;
        }
        if (!v.is_object() || !v.contains("dtype") || !v.contains("shape") || !v.contains("data_offsets"))
            throw Error(path + ": tensor '" + name + "' has a malformed header entry");
        StTensor t;
        t.name = name;
        t.file = path;
        t.dtype = v["dtype"].is_string() ? dtype_of(v["dtype"].get<std::string>()) : 0;
        if (!t.dtype)
            throw Error(path + ": tensor '" + name + "' has unsupported dtype " +
                        v["dtype"].dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        // Each dimension a count, and their product below 2^48 values, so no product wraps (a
        // shape whose product wrapped to the bytes present would claim more than the file has).
        if (!v["shape"].is_array() || v["shape"].size() > 8) throw Error(path + ": tensor '" + name + "' has a bad shape");
        uint64_t elems = 1;
        for (auto& d : v["shape"]) {
            if (!d.is_number_unsigned())  // a non-negative integer (nlohmann reads those as unsigned)
                throw Error(path + ": tensor '" + name + "' has a bad shape");
            const uint64_t n = d.get<uint64_t>();
            if (n != 0 && elems > (uint64_t{1} << 48) / n) throw Error(path + ": tensor '" + name + "' has a shape of more than 2^48 values");
            t.shape.push_back(static_cast<int64_t>(n));
            elems *= n;
        }
        auto& off = v["data_offsets"];
        if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
            throw Error(path + ": tensor '" + name + "' has bad data_offsets");
        uint64_t a = off[0].get<uint64_t>(), b = off[1].get<uint64_t>();
        if (a > b || b > data_size) throw Error(path + ": tensor '" + name + "' data lies outside the file");
        t.bytes = b - a;
        if (t.bytes != elems * static_cast<uint64_t>(rad_dtype_bits(t.dtype) / 8))
            throw Error(path + ": tensor '" + name + "' has " + std::to_string(t.bytes) + " bytes for its shape and dtype");
        t.data = base + data_start + a;
        f->tensors_[name] = std::move(t);
    }
    return f;
}

Checkpoint Checkpoint::open_file(const std::string& path) {
    Checkpoint c;
    auto f = SafetensorsFile::open(path);
    for (auto& [n, t] : f->tensors()) c.all_[n] = t;
    c.paths_.push_back(path);
    c.files_.push_back(std::move(f));
    return c;
}

Checkpoint Checkpoint::open_folder(const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    fs::path index = fs::path(dir) / "model.safetensors.index.json";
    if (fs::exists(index)) {
        std::ifstream in(index);
        auto j = nlohmann::json::parse(in, nullptr, false);
        if (j.is_discarded() || !j.contains("weight_map") || !j["weight_map"].is_object())
            throw Error(index.string() + ": not a safetensors index (no weight_map)");
        std::set<std::string> shards;
        for (auto& [k, v] : j["weight_map"].items()) {
            // a shard is a file of the folder: a name, never a path out of it
            if (!v.is_string() || v.get<std::string>().empty() || v.get<std::string>().find('/') != std::string::npos ||
                v.get<std::string>() == "..")
                throw Error(index.string() + ": weight_map['" + k + "'] is not the name of a file in the folder");
            shards.insert(v.get<std::string>());
        }
        for (auto& s : shards) files.push_back((fs::path(dir) / s).string());
    } else if (fs::exists(fs::path(dir) / "model.safetensors")) {
        files.push_back((fs::path(dir) / "model.safetensors").string());
    } else {
        std::error_code ec;
        for (auto& e : fs::directory_iterator(dir, ec))
            if (e.path().extension() == ".safetensors") files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
    }
    if (files.empty()) throw Error(dir + ": no *.safetensors files");
    Checkpoint c;
    for (auto& p : files) {
        auto f = SafetensorsFile::open(p);
        for (auto& [n, t] : f->tensors()) {
            if (c.all_.count(n)) throw Error(p + ": tensor '" + n + "' also appears in " + c.all_[n].file);
            c.all_[n] = t;
        }
        c.paths_.push_back(p);
        c.files_.push_back(std::move(f));
    }
    return c;
}

const StTensor* Checkpoint::find(const std::string& name) const {
    auto it = all_.find(name);
    return it == all_.end() ? nullptr : &it->second;
}

void Checkpoint::add_lazy(StTensor t, Maker make) {
    if (std::find(paths_.begin(), paths_.end(), t.file) == paths_.end()) paths_.push_back(t.file);
    t.data = nullptr;
    makers_[t.name] = std::move(make);
    all_[t.name] = std::move(t);
}

const uint8_t* Checkpoint::data(const StTensor& t) const {
    if (t.data) return t.data;
    auto made = made_.find(t.name);
    if (made == made_.end()) {
        auto maker = makers_.find(t.name);
        if (maker == makers_.end()) throw Error("tensor '" + t.name + "' in " + t.file + " has no data");
        made = made_.emplace(t.name, maker->second()).first;
        if (made->second.size() != t.bytes)
            throw Error("tensor '" + t.name + "' in " + t.file + " came out as " + std::to_string(made->second.size()) + " bytes, not " +
                        std::to_string(t.bytes));
    }
    return made->second.data();
}

std::string Checkpoint::files() const {
    std::string s;
    for (auto& p : paths_) s += (s.empty() ? "" : ", ") + p;
    return s;
}

}  // namespace radiance::convert
