// reader.cpp: maps a RAD2 file and validates every byte range before anything reads it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include "bytes.h"
#include "radiance/container/container.h"
#include "radiance/util/crc32c.h"
#include "radiance/util/error.h"

namespace radiance::container {
namespace {

bool in_range(uint64_t off, uint64_t len, uint64_t total) { return off <= total && len <= total - off; }

// Errors name the file, the section and the absolute offset where the problem was found.
[[noreturn]] void fail(const std::string& file, const char* section, uint64_t offset, const std::string& what) {
    throw Error(file + ": section " + section + " at offset " + std::to_string(offset) + ": " + what);
}

bool valid_dtype(uint32_t dt) { return dt > RAD_DT_NONE && dt < RAD_DT_COUNT; }

}  // namespace

Reader::~Reader() {
    if (map_) munmap(map_, size_);
}

std::unique_ptr<Reader> Reader::open(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(path + ": not a regular file");
    }
    std::unique_ptr<Reader> r(new Reader());
    r->path_ = path;
    r->size_ = static_cast<uint64_t>(st.st_size);
    if (r->size_ < kHeaderBytes) {
        ::close(fd);
        fail(path, "HEADER", 0,
             "file is " + std::to_string(r->size_) + " bytes, shorter than the " + std::to_string(kHeaderBytes) +
                 "-byte header (truncated or not a container)");
    }
    void* m = mmap(nullptr, r->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw Error(path + ": mmap failed: " + std::strerror(errno));
    r->map_ = m;
    r->base_ = static_cast<const uint8_t*>(m);
    r->parse();
    return r;
}

std::unique_ptr<Reader> Reader::from_memory(std::vector<uint8_t> bytes, const std::string& name) {
    std::unique_ptr<Reader> r(new Reader());
    r->path_ = name;
    r->owned_ = std::move(bytes);
    r->size_ = r->owned_.size();
    r->base_ = r->owned_.data();
    if (r->size_ < kHeaderBytes) fail(name, "HEADER", 0, "file is " + std::to_string(r->size_) + " bytes, shorter than the header");
    r->parse();
    return r;
}

void Reader::parse() {
    using namespace bytes;
    const uint8_t* h = base_;
    if (std::memcmp(h, kMagic, 8) != 0) fail(path_, "HEADER", 0, "bad magic: not a RAD2 container");
    uint32_t header_crc = u32(h + 44);
    if (crc32c(0, h, 44) != header_crc) fail(path_, "HEADER", 44, "header checksum mismatch (corrupted)");
    uint32_t version = u32(h + 8);
    if (version != kVersion)
        fail(path_, "HEADER", 8,
             "container version " + std::to_string(version) + " is not supported (this reader reads " + std::to_string(kVersion) + ")");
    if (u32(h + 12) != kHeaderBytes) fail(path_, "HEADER", 12, "unexpected header size");
    uint64_t file_bytes = u64(h + 16);
    if (file_bytes != size_)
        fail(path_, "HEADER", 16,
             "header says the file has " + std::to_string(file_bytes) + " bytes but it has " + std::to_string(size_) +
                 (size_ < file_bytes ? " (truncated)" : " (trailing bytes)"));
    uint64_t table_off = u64(h + 24);
    uint32_t n_sections = u32(h + 32);
    if (n_sections > 1024) fail(path_, "HEADER", 32, "implausible section count " + std::to_string(n_sections));
    uint64_t table_bytes = uint64_t{n_sections} * kSectionEntryBytes;
    if (table_off < kHeaderBytes || !in_range(table_off, table_bytes, size_))
        fail(path_, "SECTION_TABLE", table_off, "section table lies outside the file");
    if (crc32c(0, base_ + table_off, table_bytes) != u32(h + 36))
        fail(path_, "SECTION_TABLE", table_off, "section table checksum mismatch (corrupted)");

    std::set<uint32_t> seen;
    for (uint32_t i = 0; i < n_sections; ++i) {
        const uint8_t* e = base_ + table_off + uint64_t{i} * kSectionEntryBytes;
        SectionInfo s;
        s.kind = u32(e);
        s.crc = u32(e + 4);
        s.offset = u64(e + 8);
        s.size = u64(e + 16);
        s.flags = u32(e + 24);
        const char* nm = section_name(s.kind);
        if (s.offset < kHeaderBytes || !in_range(s.offset, s.size, size_))
            fail(path_, nm, s.offset, "section of " + std::to_string(s.size) + " bytes lies outside the file");
        if (!seen.insert(s.kind).second) fail(path_, nm, s.offset, "section appears twice");
        if (std::string(nm) == "UNKNOWN") {
            if (s.flags & kSectionRequired)
                fail(path_, nm, s.offset, "required section kind " + std::to_string(s.kind) + " is unknown to this reader");
            continue;  // an optional section from a newer writer
        }
        if (!(s.flags & kSectionNoCrc) && crc32c(0, base_ + s.offset, s.size) != s.crc)
            fail(path_, nm, s.offset, "section checksum mismatch (corrupted)");
        sections_.push_back(s);
    }
    auto find_sec = [&](Section k) -> const SectionInfo* {
        for (auto& s : sections_)
            if (s.kind == static_cast<uint32_t>(k)) return &s;
        return nullptr;
    };
    for (Section k : {Section::Strings, Section::Meta, Section::Encodings, Section::Tensors, Section::Planes})
        if (!find_sec(k)) fail(path_, section_name(static_cast<uint32_t>(k)), 0, "required section is missing");

    const SectionInfo& strs = *find_sec(Section::Strings);
    auto str_at = [&](uint32_t ref, const char* where, uint64_t at) -> std::string {
        if (ref >= strs.size) fail(path_, where, at, "string reference " + std::to_string(ref) + " is past the STRINGS section");
        const char* p = reinterpret_cast<const char*>(base_ + strs.offset + ref);
        size_t n = strnlen(p, strs.size - ref);
        if (n == strs.size - ref) fail(path_, where, at, "string at reference " + std::to_string(ref) + " is not terminated");
        return std::string(p, n);
    };

    // META
    const SectionInfo& ms = *find_sec(Section::Meta);
    if (ms.size < 8) fail(path_, "META", ms.offset, "section too short");
    uint32_t n_meta = u32(base_ + ms.offset);
    if (uint64_t{n_meta} * kMetaEntryBytes > ms.size - 8) fail(path_, "META", ms.offset, "entry count exceeds the section");
    for (uint32_t i = 0; i < n_meta; ++i) {
        uint64_t at = ms.offset + 8 + uint64_t{i} * kMetaEntryBytes;
        const uint8_t* e = base_ + at;
        std::string key = str_at(u32(e), "META", at);
        MetaValue v;
        uint32_t type = u32(e + 4);
        switch (static_cast<MetaType>(type)) {
        case MetaType::Int: v = MetaValue::of_int(i64(e + 8)); break;
        case MetaType::Bool: v = MetaValue::of_bool(i64(e + 8) != 0); break;
        case MetaType::F64: v = MetaValue::of_f64(f64(e + 8)); break;
        case MetaType::Str: {
            uint64_t ref = u64(e + 8);
            if (ref > UINT32_MAX) fail(path_, "META", at, "string reference out of range");
            v = MetaValue::of_str(str_at(static_cast<uint32_t>(ref), "META", at));
            break;
        }
        default: fail(path_, "META", at + 4, "unknown value type " + std::to_string(type) + " for key '" + key + "'");
        }
        meta_[key] = std::move(v);
    }

    // ENCODINGS
    const SectionInfo& es = *find_sec(Section::Encodings);
    if (es.size < 8) fail(path_, "ENCODINGS", es.offset, "section too short");
    uint32_t n_enc = u32(base_ + es.offset);
    if (uint64_t{n_enc} * kEncodingBytes > es.size - 8) fail(path_, "ENCODINGS", es.offset, "entry count exceeds the section");
    for (uint32_t i = 0; i < n_enc; ++i) {
        uint64_t at = es.offset + 8 + uint64_t{i} * kEncodingBytes;
        const uint8_t* e = base_ + at;
        RadEncoding enc;
        std::memset(&enc, 0, sizeof enc);
        std::memcpy(enc.scheme, e, RAD_ENC_NAME);
        std::memcpy(enc.transform, e + 24, RAD_ENC_NAME);
        enc.scheme[RAD_ENC_NAME - 1] = enc.transform[RAD_ENC_NAME - 1] = 0;
        enc.n_planes = static_cast<int32_t>(u32(e + 48));
        enc.vec = static_cast<int32_t>(u32(e + 52));
        if (enc.n_planes < 1 || enc.n_planes > RAD_MAX_PLANES)
            fail(path_, "ENCODINGS", at + 48, "encoding " + std::to_string(i) + " has " + std::to_string(enc.n_planes) + " planes");
        for (int p = 0; p < RAD_MAX_PLANES; ++p) {
            const uint8_t* q = e + 56 + p * kPlaneDescBytes;
            RadPlaneDesc& d = enc.planes[p];
            std::memcpy(d.role, q, RAD_ENC_NAME);
            d.role[RAD_ENC_NAME - 1] = 0;
            d.kind = static_cast<int32_t>(u32(q + 24));
            d.dtype = static_cast<int32_t>(u32(q + 28));
            d.block_r = i64(q + 32);
            d.block_c = i64(q + 40);
            d.rows = i64(q + 48);
            d.cols = i64(q + 56);
            if (p >= enc.n_planes) continue;
            bool ok =
                (d.kind == RAD_PLANE_TILED && d.block_r >= 0 && d.block_c >= 0) ||
                (d.kind == RAD_PLANE_TABLE && d.rows >= 0 && d.cols >= 0 && d.rows < (int64_t{1} << 40) && d.cols < (int64_t{1} << 40));
            if (!ok || !valid_dtype(static_cast<uint32_t>(d.dtype)))
                fail(path_, "ENCODINGS", at + 56 + p * kPlaneDescBytes,
                     "encoding " + std::to_string(i) + " plane " + std::to_string(p) + " is malformed");
        }
        encodings_.push_back(enc);
    }

    // PLANES
    const SectionInfo& ps = *find_sec(Section::Planes);
    planes_offset_ = ps.offset;
    planes_size_ = ps.size;

    // TENSORS
    const SectionInfo& ts = *find_sec(Section::Tensors);
    if (ts.size < 8) fail(path_, "TENSORS", ts.offset, "section too short");
    uint32_t n_t = u32(base_ + ts.offset);
    uint32_t n_refs = u32(base_ + ts.offset + 4);
    uint64_t need = uint64_t{n_t} * kTensorBytes + uint64_t{n_refs} * kPlaneRefBytes;
    if (need > ts.size - 8) fail(path_, "TENSORS", ts.offset, "entry counts exceed the section");
    uint64_t refs_at = ts.offset + 8 + uint64_t{n_t} * kTensorBytes;
    for (uint32_t i = 0; i < n_t; ++i) {
        uint64_t at = ts.offset + 8 + uint64_t{i} * kTensorBytes;
        const uint8_t* e = base_ + at;
        TensorInfo t;
        t.name = str_at(u32(e), "TENSORS", at);
        t.encoding = u32(e + 4);
        uint32_t rank = u32(e + 8);
        uint32_t first = u32(e + 12);
        if (t.encoding >= encodings_.size())
            fail(path_, "TENSORS", at + 4,
                 "tensor '" + t.name + "' names encoding " + std::to_string(t.encoding) + " of " + std::to_string(encodings_.size()));
        if (rank < 1 || rank > RAD_MAX_RANK) fail(path_, "TENSORS", at + 8, "tensor '" + t.name + "' has rank " + std::to_string(rank));
        int64_t elems = 1;
        for (uint32_t d = 0; d < rank; ++d) {
            int64_t x = i64(e + 16 + 8 * d);
            if (x < 0 || x > (int64_t{1} << 40) || (x && elems > (int64_t{1} << 50) / x))
                fail(path_, "TENSORS", at + 16 + 8 * d, "tensor '" + t.name + "' has an implausible extent");
            elems *= x;
            t.shape.push_back(x);
        }
        t.dtype = static_cast<int32_t>(u32(e + 48));
        const RadEncoding& enc = encodings_[t.encoding];
        if (uint64_t{first} + static_cast<uint64_t>(enc.n_planes) > n_refs)
            fail(path_, "TENSORS", at + 12, "tensor '" + t.name + "' plane references run past the table");
        for (int p = 0; p < enc.n_planes; ++p) {
            uint64_t rat = refs_at + (uint64_t{first} + p) * kPlaneRefBytes;
            PlaneRef r{u64(base_ + rat), u64(base_ + rat + 8), u32(base_ + rat + 16)};
            uint64_t want = expected_plane_bytes(enc, p, t.rows(), t.cols());
            if (r.bytes != want)
                fail(path_, "TENSORS", rat,
                     "tensor '" + t.name + "' plane '" + enc.planes[p].role + "' has " + std::to_string(r.bytes) +
                         " bytes, its encoding needs " + std::to_string(want));
            if (r.offset % kPlaneAlign != 0 || !in_range(r.offset, r.bytes, planes_size_))
                fail(path_, "TENSORS", rat,
                     "tensor '" + t.name + "' plane '" + enc.planes[p].role + "' lies outside the PLANES section or is misaligned");
            t.planes.push_back(r);
        }
        if (!by_name_.emplace(t.name, tensors_.size()).second) fail(path_, "TENSORS", at, "tensor '" + t.name + "' appears twice");
        tensors_.push_back(std::move(t));
    }
}

const TensorInfo* Reader::find(const std::string& name) const {
    auto it = by_name_.find(name);
    return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

const uint8_t* Reader::plane_data(const TensorInfo& t, size_t p) const {
    if (p >= t.planes.size()) throw Error(path_ + ": tensor '" + t.name + "' has no plane " + std::to_string(p));
    return base_ + planes_offset_ + t.planes[p].offset;
}

std::optional<std::string> Reader::blob(Section kind) const {
    for (auto& s : sections_)
        if (s.kind == static_cast<uint32_t>(kind)) return std::string(reinterpret_cast<const char*>(base_ + s.offset), s.size);
    return std::nullopt;
}

void Reader::verify_planes() const {
    for (auto& t : tensors_)
        for (size_t p = 0; p < t.planes.size(); ++p)
            if (crc32c(0, plane_data(t, p), t.planes[p].bytes) != t.planes[p].crc)
                fail(path_, "PLANES", planes_offset_ + t.planes[p].offset,
                     "tensor '" + t.name + "' plane '" + encodings_[t.encoding].planes[p].role + "' checksum mismatch (corrupted)");
}

}  // namespace radiance::container
