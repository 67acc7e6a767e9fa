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
// as readable fails "a GGUF of a type not imported"; Q5_0/Q5_1's fifth bit of value j + 16 read
// from bit j + 12 (qh misplaced) fails "Q4_1, Q5_0 and Q5_1"; Q5_0's - 16 dropped fails it and
// the short Q4_K_M; Q4_1/Q5_1's min plane written as +m (subtracted where ggml adds m) fails it.
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

// The types llama.cpp writes where a K-quant's super-blocks do not fit a row (Q4_K -> Q5_0, Q5_K
// -> Q5_1, Q6_K -> Q8_0; a 0.5B Qwen2.5's Q4_K_M is mostly Q5_0), and Q4_1.
TEST_CASE("Q4_1, Q5_0 and Q5_1 tensors imported from a GGUF serve as their reference dequantisation", "[gguf]") {
    for (auto [type, quant] : {std::pair<const char*, const char*>{"q4_1", "w4a16"}, {"q5_0", "w8a16"}, {"q5_1", "w8a16"}}) {
        INFO(type);
        Fixture f;
        convtest::libcpu_close(import_and_reference(f, type, quant));
    }
}

// The fixture's rows (64 and 160 values) are no whole super-blocks: its q4_k_m is llama.cpp's
// fallback throughout, Q5_0 with Q8_0 for attn_v, ffn_down and output, fused into one attn_qkv.
TEST_CASE("a Q4_K_M of rows too short for super-blocks (its Q5_0 and Q8_0 fallbacks) imports", "[gguf]") {
    Fixture f;
    import_and_reference(f, "q4_k_m", "w8a16");
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
