// RAD2: a round trip, and every truncation and single-byte corruption of a small container is
// either rejected with an error naming the file or (for plane bytes) caught by verify_planes.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "radiance/container/container.h"
#include "radiance/util/error.h"

using namespace radiance::container;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
    return (fs::temp_directory_path() / ("rad_ct_" + std::to_string(getpid()) + "_" + name)).string();
}

RadEncoding q4_encoding() {  // u4 codes with a bf16 scale per 32 columns: a two-plane encoding
    RadEncoding e = rad_encoding_plain(RAD_U4);
    std::strcpy(e.scheme, "affine");
    e.n_planes = 2;
    std::strcpy(e.planes[1].role, "scale");
    e.planes[1].kind = RAD_PLANE_TILED;
    e.planes[1].dtype = RAD_BF16;
    e.planes[1].block_r = 1;
    e.planes[1].block_c = 32;
    return e;
}

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
    return v;
}

std::string write_sample(const std::string& path) {
    Writer w(path);
    w.set_meta("general.architecture", MetaValue::of_str("llama"));
    w.set_meta("llama.block_count", MetaValue::of_int(2));
    w.set_meta("llama.rope.freq_base", MetaValue::of_f64(500000.0));
    w.set_meta("tie_word_embeddings", MetaValue::of_bool(true));
    uint32_t bf16 = w.add_encoding(rad_encoding_plain(RAD_BF16));
    uint32_t q4 = w.add_encoding(q4_encoding());
    CHECK(w.add_encoding(rad_encoding_plain(RAD_BF16)) == bf16);  // equal encodings are shared
    auto a = pattern(8 * 16 * 2, 1);
    w.add_tensor("tok_embd.weight", bf16, {8, 16}, RAD_BF16, {a});
    auto codes = pattern(4 * 64 / 2, 3);
    auto scales = pattern(4 * 2 * 2, 5);
    w.add_tensor("blk.0.ffn_up.weight", q4, {4, 64}, RAD_F32, {codes, scales});
    auto n = pattern(16 * 4, 9);
    w.add_tensor("output_norm.weight", w.add_encoding(rad_encoding_plain(RAD_F32)), {16}, RAD_F32, {n});
    w.set_blob(Section::Tokenizer, R"({"model":{"type":"BPE"}})");
    w.set_blob(Section::ChatTemplate, "{{ messages }}");
    w.finish();
    return path;
}

std::vector<uint8_t> read_all(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("a container round-trips metadata, tensors, planes and blobs", "[container]") {
    std::string path = write_sample(temp_path("rt.rad"));
    auto r = Reader::open(path);
    CHECK(r->meta().at("general.architecture").s == "llama");
    CHECK(r->meta().at("llama.block_count").i == 2);
    CHECK(r->meta().at("llama.rope.freq_base").f == 500000.0);
    CHECK(r->meta().at("tie_word_embeddings").to_string() == "true");
    REQUIRE(r->tensors().size() == 3);
    REQUIRE(r->encodings().size() == 3);
    const TensorInfo* up = r->find("blk.0.ffn_up.weight");
    REQUIRE(up);
    CHECK(up->shape == std::vector<int64_t>{4, 64});
    CHECK(up->dtype == RAD_F32);
    REQUIRE(up->planes.size() == 2);
    CHECK(std::string(r->encodings()[up->encoding].planes[1].role) == "scale");
    auto codes = pattern(4 * 64 / 2, 3);
    CHECK(std::memcmp(r->plane_data(*up, 0), codes.data(), codes.size()) == 0);
    auto scales = pattern(16, 5);
    CHECK(std::memcmp(r->plane_data(*up, 1), scales.data(), scales.size()) == 0);
    for (auto& t : r->tensors())
        for (size_t p = 0; p < t.planes.size(); ++p)
            CHECK(reinterpret_cast<uintptr_t>(r->plane_data(t, p)) % kPlaneAlign == 0);  // usable in place
    CHECK(r->blob(Section::Tokenizer).value() == R"({"model":{"type":"BPE"}})");
    CHECK(r->blob(Section::ChatTemplate).value() == "{{ messages }}");
    CHECK_FALSE(r->blob(Section::Recipe).has_value());
    CHECK_NOTHROW(r->verify_planes());
    fs::remove(path);
}

TEST_CASE("every truncation is rejected with the file named", "[container]") {
    std::string path = write_sample(temp_path("trunc.rad"));
    auto bytes = read_all(path);
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(n));
        try {
            Reader::from_memory(cut, "cut.rad");
            FAIL("a container truncated to " << n << " bytes was accepted");
        } catch (const radiance::Error& e) {
            REQUIRE_THAT(e.what(), Contains("cut.rad") && Contains("section"));
        }
    }
    // The mmap path names the problem too.
    fs::resize_file(path, bytes.size() - 100);
    CHECK_THROWS_WITH(Reader::open(path), Contains(path) && Contains("truncated"));
    fs::remove(path);
}

TEST_CASE("every single-byte corruption is rejected or caught by the plane checksums", "[container]") {
    std::string path = write_sample(temp_path("flip.rad"));
    auto bytes = read_all(path);
    fs::remove(path);
    size_t silent = 0;
    for (size_t i = 0; i < bytes.size(); ++i) {
        auto bad = bytes;
        bad[i] ^= 0x41;
        try {
            auto r = Reader::from_memory(bad, "flip.rad");
            try {
                r->verify_planes();
                ++silent;  // padding between planes carries no information
            } catch (const radiance::Error& e) {
                REQUIRE_THAT(e.what(), Contains("checksum mismatch"));
            }
        } catch (const radiance::Error& e) {
            REQUIRE_THAT(e.what(), Contains("flip.rad"));
        }
    }
    // Only alignment padding may change unnoticed: far less than the file.
    CHECK(silent < bytes.size());
}

TEST_CASE("a foreign file is named as not a container", "[container]") {
    std::string path = temp_path("foreign.rad");
    std::ofstream(path) << std::string(200, 'x');
    CHECK_THROWS_WITH(Reader::open(path), Contains(path) && Contains("not a RAD2 container"));
    fs::remove(path);
    CHECK_THROWS_WITH(Reader::open(temp_path("missing.rad")), Contains("cannot open"));
}

TEST_CASE("the writer names the tensor and plane of a size mismatch", "[container]") {
    std::string path = temp_path("bad.rad");
    Writer w(path);
    uint32_t e = w.add_encoding(rad_encoding_plain(RAD_BF16));
    std::vector<uint8_t> small(10);
    CHECK_THROWS_WITH(w.add_tensor("blk.3.attn_q.weight", e, {4, 4}, RAD_BF16, {small}),
                      Contains("blk.3.attn_q.weight") && Contains("codes") && Contains("32 needed"));
    fs::remove(path);
}

// (Mutation: write_plane0 not chaining the CRC, crc32c(0, ...) a piece, fails verify_planes here.)
TEST_CASE("a tensor streamed in pieces reads back as one written whole", "[container]") {
    const std::string whole = temp_path("whole.rad"), streamed = temp_path("streamed.rad");
    auto codes = pattern(6 * 64 / 2, 3);
    auto scales = pattern(6 * 2 * 2, 5);
    {
        Writer w(whole);
        w.add_tensor("w", w.add_encoding(q4_encoding()), {6, 64}, RAD_BF16, {codes, scales});
        w.finish();
    }
    {
        Writer w(streamed);
        const uint32_t e = w.add_encoding(q4_encoding());
        w.begin_tensor("w", e, {6, 64}, RAD_BF16);
        CHECK_THROWS_WITH(w.add_tensor("x", e, {6, 64}, RAD_BF16, {codes, scales}), Contains("while 'w' is being streamed"));
        for (size_t at = 0; at < codes.size(); at += 40)  // pieces that are not whole rows
            w.write_plane0(std::span<const uint8_t>(codes.data() + at, std::min<size_t>(40, codes.size() - at)));
        CHECK_THROWS_WITH(w.write_plane0(std::span<const uint8_t>(codes.data(), 1)), Contains("more than the 192 bytes"));
        w.end_tensor({scales});
        w.finish();
    }
    auto a = Reader::open(whole), b = Reader::open(streamed);
    CHECK_NOTHROW(b->verify_planes());
    const TensorInfo* ta = a->find("w");
    const TensorInfo* tb = b->find("w");
    REQUIRE(tb);
    CHECK(tb->planes[0].crc == ta->planes[0].crc);
    CHECK(std::memcmp(b->plane_data(*tb, 0), codes.data(), codes.size()) == 0);
    CHECK(std::memcmp(b->plane_data(*tb, 1), scales.data(), scales.size()) == 0);
    {
        Writer w(streamed);
        const uint32_t e = w.add_encoding(q4_encoding());
        w.begin_tensor("w", e, {6, 64}, RAD_BF16);
        w.write_plane0(std::span<const uint8_t>(codes.data(), 10));
        CHECK_THROWS_WITH(w.end_tensor({scales}), Contains("tensor 'w' plane 'codes': 10 bytes given, 192 needed"));
    }
    fs::remove(whole);
    fs::remove(streamed);
}
