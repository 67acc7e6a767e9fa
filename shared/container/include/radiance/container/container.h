// container.h: reading and writing a RAD2 model container.
//
// Reader maps the file and validates every offset before use: a truncated, corrupted or foreign
// file raises radiance::Error naming the file, the section and the offset, never reads out of
// bounds. Writer streams planes to disk as they arrive (weights are never all in memory) and
// writes the directory after them.
#pragma once
#include <radiance/rad_encoding.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "radiance/container/format.h"

namespace radiance::container {

struct MetaValue {
    MetaType type = MetaType::Str;
    int64_t i = 0;
    double f = 0;
    std::string s;

    static MetaValue of_int(int64_t v) {
        MetaValue m;
        m.type = MetaType::Int;
        m.i = v;
        return m;
    }
    static MetaValue of_f64(double v) {
        MetaValue m;
        m.type = MetaType::F64;
        m.f = v;
        return m;
    }
    static MetaValue of_str(std::string v) {
        MetaValue m;
        m.type = MetaType::Str;
        m.s = std::move(v);
        return m;
    }
    static MetaValue of_bool(bool v) {
        MetaValue m;
        m.type = MetaType::Bool;
        m.i = v;
        return m;
    }
    std::string to_string() const;  // as text, the way RadModelMeta's kv table carries it
};

struct PlaneRef {
    uint64_t offset = 0;  // from the start of the PLANES section
    uint64_t bytes = 0;
    uint32_t crc = 0;
};

struct TensorInfo {
    std::string name;
    uint32_t encoding = 0;  // index into encodings()
    std::vector<int64_t> shape;
    int32_t dtype = 0;  // the logical dtype the checkpoint had
    std::vector<PlaneRef> planes;

    int64_t rows() const;  // product of all dims but the last (1 for rank 1)
    int64_t cols() const;  // the last dim
};

struct SectionInfo {
    uint32_t kind = 0;
    uint32_t flags = 0;
    uint64_t offset = 0;
    uint64_t size = 0;
    uint32_t crc = 0;
};

class Reader {
public:
    // Maps `path` and validates the whole directory. Throws radiance::Error.
    static std::unique_ptr<Reader> open(const std::string& path);
    // Validates bytes already in memory (the fuzzer's entry); `name` appears in errors.
    static std::unique_ptr<Reader> from_memory(std::vector<uint8_t> bytes, const std::string& name);
    ~Reader();
    Reader(const Reader&) = delete;
    Reader& operator=(const Reader&) = delete;

    const std::string& path() const { return path_; }
    uint64_t file_bytes() const { return size_; }
    const std::vector<SectionInfo>& sections() const { return sections_; }
    const std::map<std::string, MetaValue>& meta() const { return meta_; }
    const std::vector<RadEncoding>& encodings() const { return encodings_; }
    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    const TensorInfo* find(const std::string& name) const;

    // Bytes of plane `p` of a tensor, in place in the mapping (aligned to kPlaneAlign).
    const uint8_t* plane_data(const TensorInfo& t, size_t p) const;
    // A raw section (tokenizer, chat template, recipe, tokenizer config), or nullopt if absent.
    std::optional<std::string> blob(Section kind) const;
    // Checks every plane's CRC; throws naming the first bad tensor and plane.
    void verify_planes() const;

private:
    Reader() = default;
    void parse();

    std::string path_;
    const uint8_t* base_ = nullptr;
    uint64_t size_ = 0;
    void* map_ = nullptr;
    std::vector<uint8_t> owned_;
    std::vector<SectionInfo> sections_;
    std::map<std::string, MetaValue> meta_;
    std::vector<RadEncoding> encodings_;
    std::vector<TensorInfo> tensors_;
    std::map<std::string, size_t> by_name_;
    uint64_t planes_offset_ = 0;
    uint64_t planes_size_ = 0;
};

class Writer {
public:
    explicit Writer(const std::string& path);  // creates or truncates; throws on I/O errors
    // Into a file already open for writing and empty (a memory file: rad-enginebench's drawn
    // weights), named `name` in errors; the writer keeps its own copy of the descriptor.
    Writer(int fd, const std::string& name);
    ~Writer();
    Writer(const Writer&) = delete;
    Writer& operator=(const Writer&) = delete;

    void set_meta(const std::string& key, MetaValue v);
    uint32_t add_encoding(const RadEncoding& e);  // returns its index; equal encodings share one
    // Writes one tensor's planes now. planes[k] must hold exactly the bytes the encoding's plane k
    // needs for `shape` (rad_plane_bytes); a mismatch throws naming the tensor and plane.
    void add_tensor(const std::string& name, uint32_t encoding, const std::vector<int64_t>& shape, int32_t dtype,
                    const std::vector<std::span<const uint8_t>>& planes);
    // The same, streamed: plane 0 (a quantised weight's codes, nearly all of its bytes) arrives in
    // order through write_plane0 calls, so a large table is never whole in memory; the later planes
    // (scales, zero points: a small fraction) arrive whole at end_tensor. Sizes are checked as in
    // add_tensor; no other tensor may be added in between.
    void begin_tensor(const std::string& name, uint32_t encoding, const std::vector<int64_t>& shape, int32_t dtype);
    void write_plane0(std::span<const uint8_t> bytes);
    void end_tensor(const std::vector<std::span<const uint8_t>>& later_planes);
    void set_blob(Section kind, std::string bytes);
    // Writes the directory and the header; the file is complete only after this returns.
    void finish();

private:
    void start();
    void write_at_end(const void* p, size_t n);
    void pad_to(uint64_t align);

    std::string path_;
    int fd_ = -1;
    uint64_t pos_ = 0;
    uint64_t planes_start_ = 0;
    bool finished_ = false;
    std::map<std::string, MetaValue> meta_;
    std::vector<RadEncoding> encodings_;
    std::vector<TensorInfo> tensors_;
    std::map<uint32_t, std::string> blobs_;
    std::map<std::string, size_t> names_;
    std::optional<TensorInfo> open_;  // the tensor begin_tensor started
    uint64_t open_plane0_bytes_ = 0;  // what its plane 0 must come to
};

// Helpers for the plane size rules shared by reader, writer and tools.
uint64_t expected_plane_bytes(const RadEncoding& e, size_t plane, int64_t rows, int64_t cols);

}  // namespace radiance::container
