#include "gguf_file.h"

#include "ggml_blocks.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <mutex>

namespace quant {

std::string ggml_type_name(uint32_t type) {
    static const char* const kNames[] = {"F32",     "F16",    "Q4_0",   "Q4_1",    "Q4_2", "Q4_3",   "Q5_0",    "Q5_1",
                                         "Q8_0",    "Q8_1",   "Q2_K",   "Q3_K",    "Q4_K", "Q5_K",   "Q6_K",    "Q8_K",
                                         "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S",  "IQ4_NL", "IQ3_S", "IQ2_S",  "IQ4_XS",
                                         "I8",      "I16",    "I32",    "I64",     "F64",  "IQ1_M",  "BF16"};
    if (type < sizeof kNames / sizeof kNames[0]) return kNames[type];
    return "type " + std::to_string(type);
}

namespace {

// Bytes of a row of `cols` values of the types read here (ggml_blocks.h for the block types); 0
// for the others, and for a block type whose rows are not whole blocks.
uint64_t row_bytes_of(uint32_t type, int64_t cols) {
    const auto c = static_cast<uint64_t>(cols);
    switch (type) {
    case kGgmlF32: return 4 * c;
    case kGgmlF16:
    case kGgmlBF16: return 2 * c;
    default: {
        const auto per = static_cast<uint64_t>(block_values(type));
        return per && c % per == 0 ? c / per * static_cast<uint64_t>(block_bytes(type)) : 0;
    }
    }
}

}  // namespace

// Reads the header in order, every read bounds-checked against the mapped size.
class GgufParser {
public:
    GgufParser(const uint8_t* p, uint64_t n) : p_(p), n_(n) {}

    bool parse(GgufFile* f, std::string* err) {
        uint32_t version = 0;
        uint64_t n_tensors = 0, n_kv = 0;
        if (n_ < 4 || std::memcmp(p_, "GGUF", 4) != 0) return fail(err, "not a GGUF file (no GGUF magic)");
        pos_ = 4;
        if (!u32(&version) || (version != 2 && version != 3)) return fail(err, "GGUF version " + std::to_string(version) + " (2 or 3 read)");
        if (!u64(&n_tensors) || !u64(&n_kv)) return fail(err, "truncated header");
        for (uint64_t i = 0; i < n_kv; ++i) {
            std::string key;
            uint32_t type = 0;
            if (!str(&key) || !u32(&type) || !value(f, key, type)) return fail(err, "truncated or malformed key/value " + std::to_string(i));
        }
        struct Info {
            GgufTensor t;
            uint64_t offset;
        };
        std::vector<Info> infos;
        for (uint64_t i = 0; i < n_tensors; ++i) {
            Info in;
            uint32_t n_dims = 0;
            if (!str(&in.t.name) || !u32(&n_dims) || n_dims == 0 || n_dims > 4) return fail(err, "malformed tensor info " + std::to_string(i));
            int64_t rows = 1;
            for (uint32_t d = 0; d < n_dims; ++d) {
                uint64_t ne = 0;
                if (!u64(&ne) || ne > (uint64_t{1} << 40)) return fail(err, "malformed dims of tensor '" + in.t.name + "'");
                if (d == 0) {
                    in.t.cols = static_cast<int64_t>(ne);
                } else {
                    if (ne != 0 && static_cast<uint64_t>(rows) > (uint64_t{1} << 50) / ne)
                        return fail(err, "tensor '" + in.t.name + "' has more than 2^50 rows");
                    rows *= static_cast<int64_t>(ne);
                }
            }
            in.t.rows = rows;
            if (!u32(&in.t.type) || !u64(&in.offset)) return fail(err, "malformed tensor info of '" + in.t.name + "'");
            infos.push_back(std::move(in));
        }
        const uint64_t align = static_cast<uint64_t>(f->integer("general.alignment", 32));
        if (align == 0 || (align & (align - 1)) || align > (uint64_t{1} << 20))
            return fail(err, "general.alignment " + std::to_string(align) + " is not a power of two of at most 1 MiB");
        const uint64_t data0 = (pos_ + align - 1) / align * align;
        for (Info& in : infos) {
            in.t.row_bytes = row_bytes_of(in.t.type, in.t.cols);
            // rows x row_bytes within what follows the offset, each step checked (no product or
            // sum that could wrap)
            const bool inside = data0 <= n_ && in.offset <= n_ - data0 &&
                                (in.t.row_bytes == 0 || static_cast<uint64_t>(in.t.rows) <= (n_ - data0 - in.offset) / in.t.row_bytes);
            if (in.t.row_bytes && !inside)
                return fail(err, "tensor '" + in.t.name + "' (" + ggml_type_name(in.t.type) + ", " + std::to_string(in.t.rows) + " rows of " +
                                     std::to_string(in.t.cols) + ") runs past the end of the file (truncated)");
            in.t.data = inside ? p_ + data0 + in.offset : nullptr;
            f->tensors_[in.t.name] = in.t;
        }
        return true;
    }

private:
    static bool fail(std::string* err, const std::string& what) {
        *err = what;
        return false;
    }
    bool take(void* out, uint64_t k) {
        if (k > n_ - pos_) return false;
        std::memcpy(out, p_ + pos_, k);
        pos_ += k;
        return true;
    }
    bool u32(uint32_t* v) { return take(v, 4); }
    bool u64(uint64_t* v) { return take(v, 8); }
    bool str(std::string* s) {
        uint64_t len = 0;
        if (!u64(&len) || len > n_ - pos_) return false;
        s->assign(reinterpret_cast<const char*>(p_ + pos_), len);
        pos_ += len;
        return true;
    }
    // One value of GGUF type `type`: integers and strings kept under `key`, the rest skipped.
    bool value(GgufFile* f, const std::string& key, uint32_t type) {
        static const int kSize[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};  // by type; 8 string, 9 array
        if (type == 8) {
            std::string s;
            if (!str(&s)) return false;
            if (!key.empty()) f->strs_[key] = s;
            return true;
        }
        if (type == 9) {
            uint32_t et = 0;
            uint64_t count = 0;
            if (!u32(&et) || !u64(&count) || et > 12 || et == 9) return false;
            for (uint64_t i = 0; i < count; ++i)
                if (!value(f, "", et)) return false;  // arrays (the vocabulary) are not needed here
            return true;
        }
        if (type > 12) return false;
        uint8_t b[8] = {};
        if (!take(b, static_cast<uint64_t>(kSize[type]))) return false;
        int64_t v = 0;
        switch (type) {
        case 0: v = b[0]; break;
        case 1: v = static_cast<int8_t>(b[0]); break;
        case 4: {
            uint32_t u;
            std::memcpy(&u, b, 4);
            v = u;
            break;
        }
        case 5: {
            int32_t s;
            std::memcpy(&s, b, 4);
            v = s;
            break;
        }
        case 10:
        case 11: std::memcpy(&v, b, 8); break;
        default: return true;  // floats, bools and 16-bit integers: not needed
        }
        if (!key.empty()) f->ints_[key] = v;
        return true;
    }

    const uint8_t* p_;
    uint64_t n_, pos_ = 0;
};

const GgufFile* GgufFile::open(const std::string& path, std::string* err) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<GgufFile>> cache;  // mapped until the process ends
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(path); it != cache.end()) return it->second.get();
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return *err = "cannot open " + path + ": " + std::strerror(errno), nullptr;
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_size <= 0) return ::close(fd), *err = path + ": empty or unreadable", nullptr;
    void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) return *err = "cannot map " + path, nullptr;
    auto f = parse(static_cast<const uint8_t*>(m), static_cast<uint64_t>(st.st_size), path, err);
    if (!f) {
        munmap(m, static_cast<size_t>(st.st_size));
        return nullptr;
    }
    return (cache[path] = std::move(f)).get();
}

std::unique_ptr<GgufFile> GgufFile::parse(const uint8_t* p, uint64_t n, const std::string& path, std::string* err) {
    auto f = std::make_unique<GgufFile>();
    f->path_ = path;
    if (!GgufParser(p, n).parse(f.get(), err)) {
        *err = path + ": " + *err;
        return nullptr;
    }
    return f;
}

const GgufTensor* GgufFile::find(const std::string& name) const {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

std::string GgufFile::str(const std::string& key, const std::string& fallback) const {
    auto it = strs_.find(key);
    return it == strs_.end() ? fallback : it->second;
}

int64_t GgufFile::integer(const std::string& key, int64_t fallback) const {
    auto it = ints_.find(key);
    return it == ints_.end() ? fallback : it->second;
}

}  // namespace quant
