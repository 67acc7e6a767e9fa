// safetensors.h: reads Hugging Face safetensors checkpoints (one file, or shards with an index)
// by mmap, validating the header against the file before any tensor is touched.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace radiance::convert {

struct StTensor {
    std::string name;
    std::string file;
    int32_t dtype = 0;  // RadDType
    std::vector<int64_t> shape;
    const uint8_t* data = nullptr;  // in the mapping
    uint64_t bytes = 0;
};

class SafetensorsFile {
public:
    static std::unique_ptr<SafetensorsFile> open(const std::string& path);
    ~SafetensorsFile();
    const std::map<std::string, StTensor>& tensors() const { return tensors_; }
    const std::map<std::string, std::string>& metadata() const { return metadata_; }

private:
    SafetensorsFile() = default;
    void* map_ = nullptr;
    uint64_t size_ = 0;
    std::map<std::string, StTensor> tensors_;
    std::map<std::string, std::string> metadata_;
};

// All tensors of a checkpoint folder: model.safetensors, or the shards an index names, or every
// *.safetensors file. Throws radiance::Error naming the file on any problem.
class Checkpoint {
public:
    static Checkpoint open_folder(const std::string& dir);
    static Checkpoint open_file(const std::string& path);
    const StTensor* find(const std::string& name) const;
    const std::map<std::string, StTensor>& tensors() const { return all_; }
    std::string files() const;  // for messages
    // A tensor whose bytes are made when first read rather than mapped (a GGUF file's, decoded:
    // gguf_source.h): t.data stays null, t.bytes says how many `make` returns.
    using Maker = std::function<std::vector<uint8_t>()>;
    void add_lazy(StTensor t, Maker make);
    // A tensor's bytes: mapped, or made now and kept until drop_made(), so that a converter holds
    // one weight's worth at a time.
    const uint8_t* data(const StTensor& t) const;
    void drop_made() const { made_.clear(); }

private:
    std::map<std::string, Maker> makers_;
    mutable std::map<std::string, std::vector<uint8_t>> made_;
    std::vector<std::shared_ptr<SafetensorsFile>> files_;
    std::vector<std::string> paths_;
    std::map<std::string, StTensor> all_;
};

}  // namespace radiance::convert
