// GGUF K-quant import (libquant's `ggml` quantiser, Q4_K / Q5_K / Q6_K as affine planes): a
// llama of rows of 256 and 512 values (whole super-blocks), written as a GGUF by
// tools/gguf/export_gguf.py (the published block layouts, its own simple quantiser), converted
// with `* ggml file=THAT.gguf`. The reference is tools/gguf/dequant_gguf.py's dequantisation of
// the same file (written from the layouts, sharing no code with the importer) as f32 safetensors,
// converted plainly: on libref the two containers' logits are equal bit for bit. libcpu's gemm_q
// rows (the min folded into each group's sum of x; Q6_K's groups of 16 on the 8-bit rows) serve
// the imported container within their summation-order tolerance of libref.
//
// Mutations each of these caught (made, watched fail, undone; "K" = the Q4_K, Q5_K and Q4_K_M cases):
//   - ggml_blocks.cpp, Q4_K/Q5_K's nibbles taken in byte order (value 2l the low nibble of byte
//     l, not l and l + 32 of the 64-chunk): fails K's logits on libref;
//   - ggml_blocks.cpp, Q5_K's fifth bit of the low nibbles read from bit 2c + 1 of qh: fails "Q5_K";
//   - ggml_blocks.cpp, Q6_K's - 32 dropped: fails "Q6_K" and "Q4_K_M";
//   - ggml_blocks.cpp, the min written negated (added in the decode, not subtracted): fails K;
//   - ggml_blocks.cpp, sub-blocks 4-7's scale high bits taken from k[j], not k[j - 4]: fails K;
//   - plugins/kernels/ref/gemm_q.cpp ignoring operand 6 (no min): fails K on libref and libcpu;
//   - body_gemm_q.inc's decode kernel skipping the min term: fails K's libcpu comparison.
// The refusals: a truncated tensor, an unknown type, K-quant rows not whole super-blocks.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

#include "gguf_import_util.h"

using namespace radiance;
using convtest::Fixture;
using convtest::import_and_reference;
using convtest::libcpu_close;
using convtest::logits;
using convtest::tiny_gguf;
using convtest::wide_llama;
namespace fs = std::filesystem;

namespace {

// What a conversion printed on stderr (the ggml quantiser's refusals name the tensor there) and
// the exception's message.
std::string refusal(Fixture& f, const std::string& recipe) {
    const std::string log = (f.dir / "stderr.txt").string();
    std::fflush(stderr);
    const int saved = dup(2), fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    ::close(fd);
    std::string what;
    try {
        f.convert_it(recipe);
    } catch (const std::exception& e) {
        what = e.what();
    }
    std::fflush(stderr);
    dup2(saved, 2);
    ::close(saved);
    std::ifstream in(log);
    std::stringstream ss;
    ss << in.rdbuf();
    return what + "\n" + ss.str();
}

}  // namespace

TEST_CASE("Q4_K tensors imported from a GGUF serve as their reference dequantisation, bit for bit on libref", "[gguf][kquant]") {
    Fixture f;
    wide_llama(f);
    const std::string rad = import_and_reference(f, "q4_k", "w4a16");
    libcpu_close(rad);
}

TEST_CASE("Q5_K tensors imported from a GGUF serve as their reference dequantisation, bit for bit on libref", "[gguf][kquant]") {
    Fixture f;
    wide_llama(f);
    const std::string rad = import_and_reference(f, "q5_k", "w8a16");  // u8 codes
    libcpu_close(rad);
}

TEST_CASE("Q6_K tensors imported from a GGUF serve as their reference dequantisation, bit for bit on libref", "[gguf][kquant]") {
    Fixture f;
    wide_llama(f);
    const std::string rad = import_and_reference(f, "q6_k", "w8a16");  // i8 codes, groups of 16
    libcpu_close(rad);
}

// Q4_K_M's mix: attn_v, ffn_down and output Q6_K, the rest Q4_K, so the fused attn_qkv joins Q4_K
// q and k with a Q6_K v (one encoding holding both: i8 codes, groups of 16, a min).
TEST_CASE("a Q4_K_M mix imports, the fused qkv of Q4_K and Q6_K parts included, bit for bit on libref", "[gguf][kquant]") {
    Fixture f;
    wide_llama(f);
    const std::string rad = import_and_reference(f, "q4_k_m", "w4a16");
    libcpu_close(rad);
}

TEST_CASE("a truncated K-quant tensor, an unknown type and rows not of whole super-blocks are refused, naming them", "[gguf][kquant]") {
    Fixture f;
    const std::string cast = "\n* cast dtype=bf16\n";
    SECTION("truncated") {  // Q4_K rows of 256: 144 bytes a row, the file one byte short
        const fs::path bad = f.dir / "t.gguf";
        tiny_gguf(bad, {{"output.weight", 512}}, 12, 256, 512 * 144);
        fs::resize_file(bad, fs::file_size(bad) - 1);
        const std::string what = refusal(f, "output.weight ggml file=" + bad.string() + cast);
        INFO(what);
        CHECK(what.find("output.weight") != std::string::npos);
        CHECK(what.find("Q4_K") != std::string::npos);
        CHECK(what.find(bad.string()) != std::string::npos);
        CHECK(what.find("truncated") != std::string::npos);
    }
    SECTION("an unknown ggml type") {
        const fs::path bad = f.dir / "u.gguf";
        tiny_gguf(bad, {{"output.weight", 512}}, 99, 64, 512 * 64);
        const std::string what = refusal(f, "output.weight ggml file=" + bad.string() + cast);
        INFO(what);
        CHECK(what.find("output.weight") != std::string::npos);
        CHECK(what.find("type 99") != std::string::npos);
        CHECK(what.find(bad.string()) != std::string::npos);
    }
    SECTION("K-quant rows of 64 values") {
        const fs::path bad = f.dir / "r.gguf";
        tiny_gguf(bad, {{"output.weight", 512}}, 14, 64, 512 * 210);
        const std::string what = refusal(f, "output.weight ggml file=" + bad.string() + cast);
        INFO(what);
        CHECK(what.find("output.weight") != std::string::npos);
        CHECK(what.find("Q6_K") != std::string::npos);
        CHECK(what.find("256") != std::string::npos);
        CHECK(what.find(bad.string()) != std::string::npos);
    }
    CHECK(!f.any_output());
}
