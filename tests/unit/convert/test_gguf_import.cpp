// GGUF import (libquant's `ggml` quantiser): the fixture written as a GGUF file of Q8_0 or Q4_0
// tensors by tools/gguf/export_gguf.py (ggml's reference quantisers, llama.cpp's q/k row order),
// then converted with `* ggml file=THAT.gguf`. The reference is independent of radiance's code:
// tools/gguf/dequant_gguf.py reads the same file as gguf-py dequantises it (its own GGUF parser,
// the q/k order undone) into f32 safetensors, converted plainly. On libref, whose gemm_q is "the
// core's decode, then gemm's arithmetic", the two containers' logits are equal bit for bit.
//
// Mutations each of these caught (made, watched fail, undone): the Q4_0 nibbles taken in byte
// order (value 2j from the low nibble of byte j, as the canonical packing, not j and j + 16)
// fails "Q4_0"'s logits; the q/k rows not put back in transformers' order fails both; a Q8_0
// scale read from the block's second byte pair fails "Q8_0"; gguf_file.cpp taking an unknown type
// as readable fails "a GGUF of a type not imported".
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include "convert_fixture.h"
#include "radiance/container/container.h"
#include "serve_logits.h"

using namespace radiance;
using convtest::Fixture;
using convtest::logits;
namespace fs = std::filesystem;

namespace {

int run(const std::string& cmd) { return std::system((cmd + " > /dev/null").c_str()); }

// The fixture's folder converted with every weight imported from a GGUF of `qtype`, and the
// reference container of the file's dequantised weights; returns the two logits.
void import_and_reference(const char* qtype, const char* want_quant) {
    Fixture f;
    f.convert_it();  // writes the folder (and an unquantised out.rad, replaced below)
    const std::string gguf = (f.dir / "m.gguf").string(), ref = (f.dir / "ref").string();
    REQUIRE(run("python3 " EXPORT_GGUF " " + f.dir.string() + " " + gguf + " --type " + qtype) == 0);
    fs::remove(f.dir / "out.rad");
    f.convert_it("* ggml file=" + gguf + "\n");
    auto q = container::Reader::open((f.dir / "out.rad").string());
    CHECK(q->meta().at("arch.quant").s == want_quant);

    REQUIRE(run("python3 " DEQUANT_GGUF " " + gguf + " " + f.dir.string() + " " + ref) == 0);
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    const core::Registry reg = core::Registry::load(lo);
    convert::ConvertOptions o;
    o.src = ref;
    o.out = ref + "/ref.rad";
    std::ostringstream log;
    convert::convert(reg, o, log);

    const auto li = logits((f.dir / "out.rad").string(), {"libref"}), lr = logits(o.out, {"libref"});
    REQUIRE(li.size() == lr.size());
    CHECK(std::memcmp(li.data(), lr.data(), li.size() * 4) == 0);
}

// A GGUF of tensors (name, rows) of `cols` columns and ggml type `type`, each `bytes` long (zeros).
void tiny_gguf(const fs::path& p, const std::vector<std::pair<std::string, uint64_t>>& tensors, uint32_t type, uint64_t cols,
               uint64_t bytes) {
    std::string h = "GGUF";
    auto u32 = [&](uint32_t v) { h.append(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](uint64_t v) { h.append(reinterpret_cast<const char*>(&v), 8); };
    u32(3);
    u64(tensors.size());
    u64(0);
    uint64_t off = 0;
    for (auto& [name, rows] : tensors) {
        u64(name.size());
        h += name;
        u32(2);
        u64(cols);
        u64(rows);
        u32(type);
        u64(off);
        off += (bytes + 31) / 32 * 32;
    }
    h.resize((h.size() + 31) / 32 * 32, '\0');
    h.resize(h.size() + off, '\0');
    std::ofstream(p, std::ios::binary) << h;
}

}  // namespace

TEST_CASE("Q8_0 tensors imported from a GGUF serve as gguf-py's dequantisation of them, bit for bit on libref", "[gguf]") {
    import_and_reference("q8_0", "w8a16");
}

TEST_CASE("Q4_0 tensors imported from a GGUF serve as gguf-py's dequantisation of them, bit for bit on libref", "[gguf]") {
    import_and_reference("q4_0", "w4a16");
}

TEST_CASE("a GGUF of a type not imported, or without a weight's tensor, is refused before anything is written", "[gguf]") {
    Fixture f;
    // Q4_K (type 12): blocks of 256 in 144 bytes; the fixture's rows have 64 values, so the file
    // is a stand-in of the right names, shapes and type, not a loadable model (its q, k and v
    // are all there: only the type is wrong).
    const fs::path bad = f.dir / "k.gguf";
    tiny_gguf(bad, {{"blk.0.attn_q.weight", 64}, {"blk.0.attn_k.weight", 32}, {"blk.0.attn_v.weight", 32}}, 12, 64, 64 * 144);
    std::string what;
    try {
        f.convert_it("blk.0.attn_qkv.weight ggml file=" + bad.string() + "\n* cast dtype=bf16\n");
    } catch (const std::exception& e) {
        what = e.what();
    }
    INFO(what);
    CHECK(what.find("ggml") != std::string::npos);
    CHECK(what.find(bad.string()) != std::string::npos);
    CHECK(!f.any_output());
    // a file without the weight's tensors at all
    what.clear();
    try {
        f.convert_it("output.weight ggml file=" + bad.string() + "\n* cast dtype=bf16\n");
    } catch (const std::exception& e) {
        what = e.what();
    }
    INFO(what);
    CHECK(what.find("output.weight") != std::string::npos);
    CHECK(!f.any_output());
}
