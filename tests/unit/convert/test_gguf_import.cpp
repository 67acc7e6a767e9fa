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

#include "gguf_import_util.h"

using namespace radiance;
using convtest::Fixture;
using convtest::import_and_reference;
using convtest::tiny_gguf;
namespace fs = std::filesystem;

TEST_CASE("Q8_0 tensors imported from a GGUF serve as gguf-py's dequantisation of them, bit for bit on libref", "[gguf]") {
    Fixture f;
    import_and_reference(f, "q8_0", "w8a16");
}

TEST_CASE("Q4_0 tensors imported from a GGUF serve as gguf-py's dequantisation of them, bit for bit on libref", "[gguf]") {
    Fixture f;
    import_and_reference(f, "q4_0", "w4a16");
}

TEST_CASE("a GGUF of a type not imported, or without a weight's tensor, is refused before anything is written", "[gguf]") {
    Fixture f;
    // Q2_K (type 10, not imported): blocks of 256 in 84 bytes; the fixture's rows have 64 values,
    // so the file is a stand-in of the right names, shapes and type, not a loadable model (its q,
    // k and v are all there: only the type is wrong).
    const fs::path bad = f.dir / "k.gguf";
    tiny_gguf(bad, {{"blk.0.attn_q.weight", 64}, {"blk.0.attn_k.weight", 32}, {"blk.0.attn_v.weight", 32}}, 10, 64, 64 * 84);
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
