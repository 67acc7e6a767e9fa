// writer.cpp: streams planes into the PLANES section as tensors arrive, then writes the
// directory sections, the section table and finally the header (so a crash mid-write leaves a
// file the reader rejects instead of a plausible half container).
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bytes.h"
#include "radiance/container/container.h"
#include "radiance/util/crc32c.h"
#include "radiance/util/error.h"

namespace radiance::container {

using namespace bytes;

Writer::Writer(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(path + ": cannot create: " + std::strerror(errno));
    start();
}

Writer::Writer(int fd, const std::string& name) : path_(name) {
    fd_ = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (fd_ < 0) throw Error(name + ": cannot write: " + std::strerror(errno));
    start();
}

// Reserves the header (written last) and aligns the first plane. A constructor that throws runs no
// destructor, so a failure here closes the descriptor itself.
void Writer::start() {
    try {
        std::string zeros(kHeaderBytes, '\0');
        write_at_end(zeros.data(), zeros.size());
        pad_to(kPlanesAlign);
        planes_start_ = pos_;
    } catch (...) {
        ::close(fd_);
        fd_ = -1;
        throw;
    }
}

Writer::~Writer() {
    if (fd_ >= 0) ::close(fd_);
}

void Writer::write_at_end(const void* p, size_t n) {
    const char* c = static_cast<const char*>(p);
    while (n > 0) {
        ssize_t w = ::pwrite(fd_, c, n, static_cast<off_t>(pos_));
        if (w < 0) {
            if (errno == EINTR) continue;
            throw Error(path_ + ": write failed at offset " + std::to_string(pos_) + ": " + std::strerror(errno));
        }
        c += w;
        n -= static_cast<size_t>(w);
        pos_ += static_cast<uint64_t>(w);
    }
}

void Writer::pad_to(uint64_t align) {
    uint64_t pad = (align - pos_ % align) % align;
    if (!pad) return;
    std::string zeros(pad, '\0');
    write_at_end(zeros.data(), zeros.size());
}

void Writer::set_meta(const std::string& key, MetaValue v) { meta_[key] = std::move(v); }

uint32_t Writer::add_encoding(const RadEncoding& e) {
    RadEncoding norm;  // compare on the fields that are stored
    std::memset(&norm, 0, sizeof norm);
    std::memcpy(&norm, &e, sizeof norm);
    for (size_t i = 0; i < encodings_.size(); ++i)
        if (std::memcmp(&encodings_[i], &norm, sizeof norm) == 0) return static_cast<uint32_t>(i);
    encodings_.push_back(norm);
    return static_cast<uint32_t>(encodings_.size() - 1);
}

void Writer::add_tensor(const std::string& name, uint32_t encoding, const std::vector<int64_t>& shape, int32_t dtype,
                        const std::vector<std::span<const uint8_t>>& planes) {
    if (open_) throw Error(path_ + ": add_tensor '" + name + "' while '" + open_->name + "' is being streamed");
    if (finished_) throw Error(path_ + ": add_tensor after finish");
    if (encoding >= encodings_.size()) throw Error(path_ + ": tensor '" + name + "': unknown encoding index");
    if (shape.empty() || shape.size() > RAD_MAX_RANK) throw Error(path_ + ": tensor '" + name + "': rank must be 1..4");
    if (names_.count(name)) throw Error(path_ + ": tensor '" + name + "' written twice");
    const RadEncoding& enc = encodings_[encoding];
    if (planes.size() != static_cast<size_t>(enc.n_planes))
        throw Error(path_ + ": tensor '" + name + "': " + std::to_string(planes.size()) + " planes given, encoding has " +
                    std::to_string(enc.n_planes));
    TensorInfo t;
    t.name = name;
    t.encoding = encoding;
    t.shape = shape;
    t.dtype = dtype;
    for (size_t p = 0; p < planes.size(); ++p) {
        uint64_t want = expected_plane_bytes(enc, p, t.rows(), t.cols());
        if (planes[p].size() != want)
            throw Error(path_ + ": tensor '" + name + "' plane '" + enc.planes[p].role + "': " + std::to_string(planes[p].size()) +
                        " bytes given, " + std::to_string(want) + " needed");
        pad_to(kPlaneAlign);
        PlaneRef r;
        r.offset = pos_ - planes_start_;
        r.bytes = want;
        r.crc = crc32c(0, planes[p].data(), planes[p].size());
        write_at_end(planes[p].data(), planes[p].size());
        t.planes.push_back(r);
    }
    names_[name] = tensors_.size();
    tensors_.push_back(std::move(t));
}

void Writer::begin_tensor(const std::string& name, uint32_t encoding, const std::vector<int64_t>& shape, int32_t dtype) {
    if (open_) throw Error(path_ + ": begin_tensor '" + name + "' while '" + open_->name + "' is being streamed");
    if (finished_) throw Error(path_ + ": begin_tensor after finish");
    if (encoding >= encodings_.size()) throw Error(path_ + ": tensor '" + name + "': unknown encoding index");
    if (shape.empty() || shape.size() > RAD_MAX_RANK) throw Error(path_ + ": tensor '" + name + "': rank must be 1..4");
    if (names_.count(name)) throw Error(path_ + ": tensor '" + name + "' written twice");
    TensorInfo t;
    t.name = name;
    t.encoding = encoding;
    t.shape = shape;
    t.dtype = dtype;
    open_plane0_bytes_ = expected_plane_bytes(encodings_[encoding], 0, t.rows(), t.cols());
    pad_to(kPlaneAlign);
    PlaneRef r;
    r.offset = pos_ - planes_start_;
    t.planes.push_back(r);
    open_ = std::move(t);
}

void Writer::write_plane0(std::span<const uint8_t> bytes) {
    if (!open_) throw Error(path_ + ": write_plane0 without begin_tensor");
    PlaneRef& r = open_->planes[0];
    if (r.bytes + bytes.size() > open_plane0_bytes_)
        throw Error(path_ + ": tensor '" + open_->name + "' plane '" + encodings_[open_->encoding].planes[0].role + "': more than the " +
                    std::to_string(open_plane0_bytes_) + " bytes it needs");
    r.crc = crc32c(r.crc, bytes.data(), bytes.size());
    r.bytes += bytes.size();
    write_at_end(bytes.data(), bytes.size());
}

void Writer::end_tensor(const std::vector<std::span<const uint8_t>>& later_planes) {
    if (!open_) throw Error(path_ + ": end_tensor without begin_tensor");
    TensorInfo t = std::move(*open_);
    open_.reset();
    const RadEncoding& enc = encodings_[t.encoding];
    if (t.planes[0].bytes != open_plane0_bytes_)
        throw Error(path_ + ": tensor '" + t.name + "' plane '" + enc.planes[0].role + "': " + std::to_string(t.planes[0].bytes) +
                    " bytes given, " + std::to_string(open_plane0_bytes_) + " needed");
    if (later_planes.size() + 1 != static_cast<size_t>(enc.n_planes))
        throw Error(path_ + ": tensor '" + t.name + "': " + std::to_string(later_planes.size() + 1) + " planes given, encoding has " +
                    std::to_string(enc.n_planes));
    for (size_t p = 1; p < static_cast<size_t>(enc.n_planes); ++p) {
        const std::span<const uint8_t> bytes = later_planes[p - 1];
        const uint64_t want = expected_plane_bytes(enc, p, t.rows(), t.cols());
        if (bytes.size() != want)
            throw Error(path_ + ": tensor '" + t.name + "' plane '" + enc.planes[p].role + "': " + std::to_string(bytes.size()) +
                        " bytes given, " + std::to_string(want) + " needed");
        pad_to(kPlaneAlign);
        PlaneRef r;
        r.offset = pos_ - planes_start_;
        r.bytes = want;
        r.crc = crc32c(0, bytes.data(), bytes.size());
        write_at_end(bytes.data(), bytes.size());
        t.planes.push_back(r);
    }
    names_[t.name] = tensors_.size();
    tensors_.push_back(std::move(t));
}

void Writer::set_blob(Section kind, std::string bytes) { blobs_[static_cast<uint32_t>(kind)] = std::move(bytes); }

void Writer::finish() {
    if (finished_) return;
    if (open_) throw Error(path_ + ": finish while tensor '" + open_->name + "' is being streamed");
    finished_ = true;
    uint64_t planes_end = pos_;

    std::string strings(1, '\0');  // reference 0 is the empty string
    std::map<std::string, uint32_t> interned;
    auto intern = [&](const std::string& s) -> uint32_t {
        auto it = interned.find(s);
        if (it != interned.end()) return it->second;
        uint32_t ref = static_cast<uint32_t>(strings.size());
        strings += s;
        strings += '\0';
        interned[s] = ref;
        return ref;
    };

    std::string meta;
    put_u32(meta, static_cast<uint32_t>(meta_.size()));
    put_u32(meta, 0);
    for (auto& [k, v] : meta_) {
        put_u32(meta, intern(k));
        put_u32(meta, static_cast<uint32_t>(v.type));
        switch (v.type) {
        case MetaType::Int:
        case MetaType::Bool: put_i64(meta, v.i); break;
        case MetaType::F64: put_f64(meta, v.f); break;
        case MetaType::Str: put_u64(meta, intern(v.s)); break;
        }
    }

    std::string encs;
    put_u32(encs, static_cast<uint32_t>(encodings_.size()));
    put_u32(encs, 0);
    for (auto& e : encodings_) {
        put_name(encs, e.scheme, RAD_ENC_NAME);
        put_name(encs, e.transform, RAD_ENC_NAME);
        put_u32(encs, static_cast<uint32_t>(e.n_planes));
        put_u32(encs, static_cast<uint32_t>(e.vec));
        for (int p = 0; p < RAD_MAX_PLANES; ++p) {
            const RadPlaneDesc& d = e.planes[p];
            put_name(encs, d.role, RAD_ENC_NAME);
            put_u32(encs, static_cast<uint32_t>(d.kind));
            put_u32(encs, static_cast<uint32_t>(d.dtype));
            put_i64(encs, d.block_r);
            put_i64(encs, d.block_c);
            put_i64(encs, d.rows);
            put_i64(encs, d.cols);
        }
    }

    std::string tens;
    uint32_t n_refs = 0;
    for (auto& t : tensors_) n_refs += static_cast<uint32_t>(t.planes.size());
    put_u32(tens, static_cast<uint32_t>(tensors_.size()));
    put_u32(tens, n_refs);
    uint32_t first = 0;
    for (auto& t : tensors_) {
        put_u32(tens, intern(t.name));
        put_u32(tens, t.encoding);
        put_u32(tens, static_cast<uint32_t>(t.shape.size()));
        put_u32(tens, first);
        for (int d = 0; d < RAD_MAX_RANK; ++d) put_i64(tens, d < static_cast<int>(t.shape.size()) ? t.shape[d] : 0);
        put_u32(tens, static_cast<uint32_t>(t.dtype));
        put_u32(tens, 0);
        put_u64(tens, 0);
        first += static_cast<uint32_t>(t.planes.size());
    }
    for (auto& t : tensors_)
        for (auto& r : t.planes) {
            put_u64(tens, r.offset);
            put_u64(tens, r.bytes);
            put_u32(tens, r.crc);
            put_u32(tens, 0);
        }

    std::vector<SectionInfo> table;
    table.push_back(
        {static_cast<uint32_t>(Section::Planes), kSectionRequired | kSectionNoCrc, planes_start_, planes_end - planes_start_, 0});
    auto emit = [&](Section kind, const std::string& body, uint32_t flags) {
        pad_to(8);
        table.push_back({static_cast<uint32_t>(kind), flags, pos_, body.size(), crc32c(0, body.data(), body.size())});
        write_at_end(body.data(), body.size());
    };
    emit(Section::Strings, strings, kSectionRequired);
    emit(Section::Meta, meta, kSectionRequired);
    emit(Section::Encodings, encs, kSectionRequired);
    emit(Section::Tensors, tens, kSectionRequired);
    for (auto& [kind, body] : blobs_) emit(static_cast<Section>(kind), body, 0);

    pad_to(8);
    uint64_t table_off = pos_;
    std::string tab;
    for (auto& s : table) {
        put_u32(tab, s.kind);
        put_u32(tab, s.crc);
        put_u64(tab, s.offset);
        put_u64(tab, s.size);
        put_u32(tab, s.flags);
        put_u32(tab, 0);
    }
    write_at_end(tab.data(), tab.size());

    std::string hdr(kMagic, 8);
    put_u32(hdr, kVersion);
    put_u32(hdr, kHeaderBytes);
    put_u64(hdr, pos_);
    put_u64(hdr, table_off);
    put_u32(hdr, static_cast<uint32_t>(table.size()));
    put_u32(hdr, crc32c(0, tab.data(), tab.size()));
    put_u32(hdr, 0);  // flags
    put_u32(hdr, crc32c(0, hdr.data(), 44));
    hdr.append(kHeaderBytes - hdr.size(), '\0');
    if (::pwrite(fd_, hdr.data(), hdr.size(), 0) != static_cast<ssize_t>(hdr.size()))
        throw Error(path_ + ": writing the header failed: " + std::strerror(errno));
    if (::fsync(fd_) != 0 && errno != EINVAL) throw Error(path_ + ": fsync failed: " + std::strerror(errno));
    ::close(fd_);
    fd_ = -1;
}

}  // namespace radiance::container
