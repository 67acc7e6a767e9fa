// Quantised containers of the dense families beside llama: phi3 (the llama source, its fused
// qkv_proj / gate_up_proj and LongRoPE), gemma2 and gemma3 (gemma.cpp) and gpt2 (gpt2.cpp, every
// projection with a bias), each on a golden fixture. As test_quantised_serving.cpp does for llama:
// the plugin of the container's descriptor declares every projection at its encoding (gemm_q over
// the planes), and its logits are those of the same model with every weight decoded to plain f32
// (the unquantised plugin, gemm): on libref bit for bit, since its gemm_q is "decode, then gemm's
// arithmetic"; libcpu within its gemm tolerance. Two recipes a family, as a container holds one
// descriptor: int4 with zero points, int4 symmetric in groups of 16 and int8 (w4a16); fp8 per
// 16 x 16 block and per row (fp8_e4m3). The tied heads (gemma, gpt2) read the plain embedding.
//
// Mutations each of these caught (made, watched fail, undone):
// - gemma.cpp's MLP declared without the build's codes (mc.quant_codes unset): "bit for bit" and
//   the libcpu case fail at gemma2, the plugin refusing blk.0.ffn_gate_up.weight by name;
// - gpt2.cpp issuing ffn_up without its bias when quantised: "bit for bit" fails for gpt2 at
//   w4a16 and fp8 (only once give_biases is there: the fixture's biases are all zero, and with
//   them the mutation passed);
// - gpt2.cpp declaring ffn_up as a plain gemm of the codes (the code before Linear): "bit for
//   bit" and the libcpu case fail at gpt2, the plan finding no gemm row for the codes' dtype;
// - Linear::issue handing the scale plane as the zero point too: both serving cases fail at the
//   first family (phi3), the gemm_q kernels refusing the operand;
// - gpt2.cpp not checking its position embedding plain: the last refusal fails.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>

#include "convert_fixture.h"
#include "quant_serving.h"
#include "radiance/container/container.h"
#include "radiance/engine/engine.h"
#include "serve_logits.h"

using namespace radiance;
using Catch::Matchers::Contains;
using convtest::Fixture;
using convtest::logits;
using convtest::write_decoded;
namespace fs = std::filesystem;

namespace {

struct Family {
    const char* id;
    std::string dir;
    int layers;
    bool tied;  // the head reads the (plain) embedding: one gemm, not a gemm_q
};

const Family kFamilies[] = {
    {"phi3", GOLDEN_FIXTURES "/phi3_longrope_partial", 2, false},
    {"gemma2", GOLDEN_FIXTURES "/gemma2_softcap_w12", 3, true},
    {"gemma3", RAD_SHARED_DIR "/fixtures/golden/gemma3", 2, true},
    {"gpt2", GOLDEN_FIXTURES "/gpt2_tiny", 3, true},
};

// The embeddings, norms and biases plain; groups of 16 and 32 columns divide every fixture's rows
// (64, 128, 160 or 192 wide).
#define KEEP_PLAIN                                    \
    "{token,position}_embd.weight  cast dtype=bf16\n" \
    "*{norm,bias}*                 cast dtype=f32\n"
const char* kInt = KEEP_PLAIN
    "blk.0.*           rtn bits=4 group=32 zero=1\n"
    "blk.1.ffn_down.*  rtn bits=4 group=16\n"
    "*                 rtn bits=8 group=32\n";
const char* kFp8 = KEEP_PLAIN
    "blk.0.*           fp8 block=16\n"
    "*                 fp8\n";

// Every bias of the checkpoint given values (GPT-2's fixture, freshly initialised, has them all
// zero, and a bias dropped would go unseen): small, deterministic, of the tensor's own dtype.
void give_biases(Fixture& f) {
    for (auto& [name, tv] : f.tensors) {
        if (!name.ends_with(".bias")) continue;
        auto& [t, bytes] = tv;
        const int64_t n = static_cast<int64_t>(bytes.size()) / (rad_dtype_bits(t.dtype) / 8);
        for (int64_t i = 0; i < n; ++i) rad_store_f32(t.dtype, bytes.data(), i, 0.1f * std::sin(0.7f * static_cast<float>(i) + 1.0f));
    }
}

}  // namespace

TEST_CASE("quantised phi3, gemma2, gemma3 and gpt2 containers give their decoded models' logits, bit for bit on libref",
          "[recipe][serve][families]") {
    for (const Family& fam : kFamilies) {
        Fixture f(fam.dir);
        give_biases(f);
        f.convert_it();
        const auto lp = logits((f.dir / "out.rad").string(), {"libref"});
        for (auto [recipe, quant] : {std::pair{kInt, "w4a16"}, std::pair{kFp8, "fp8_e4m3"}}) {
            INFO(fam.id << " at " << quant);
            fs::remove(f.dir / "out.rad");
            f.convert_it(recipe);
            const std::string rad = (f.dir / "out.rad").string(), decoded = (f.dir / "decoded.rad").string();
            auto q = container::Reader::open(rad);
            CHECK(q->meta().at("arch.id").s == fam.id);
            CHECK(q->meta().at("arch.quant").s == quant);
            {  // every projection gemm_q; the tied head the one plain gemm
                auto eng = convtest::serve(rad, {"libref"});
                int gemm_q = 0, gemm = 0;
                for (auto& op : eng->declaration().ops) {
                    gemm_q += op.geom.op == "gemm_q";
                    gemm += op.geom.op == "gemm" || op.geom.op == "gemm_swiglu" || op.geom.op == "rms_norm_gemm";
                }
                CHECK(gemm_q == 4 * fam.layers + (fam.tied ? 0 : 1));
                CHECK(gemm == (fam.tied ? 1 : 0));
            }
            fs::remove(decoded);
            write_decoded(*q, decoded);
            const auto lq = logits(rad, {"libref"}), ld = logits(decoded, {"libref"});
            REQUIRE(lq.size() == 10u * 512u);
            REQUIRE(ld.size() == lq.size());
            CHECK(std::memcmp(lq.data(), ld.data(), lq.size() * 4) == 0);
            CHECK(convtest::rel_rms(lq, lp) > 1e-4);  // and the quantisation is not nothing
        }
    }
}

TEST_CASE("libcpu serves the quantised families' containers as libref does", "[recipe][serve][families][cpu]") {
    for (const Family& fam : kFamilies) {
        INFO(fam.id);
        Fixture f(fam.dir);
        give_biases(f);
        f.convert_it(kInt);
        convtest::check_libcpu_as_libref((f.dir / "out.rad").string());
    }
}

TEST_CASE("the families' plugins refuse by name an encoding they do not read", "[recipe][families]") {
    for (const Family& fam : kFamilies) {
        INFO(fam.id);
        Fixture f(fam.dir);
        // the unquantised plugin, and the w8a16 one given 4-bit codes
        CHECK_THROWS_WITH(f.convert_it(kInt, ""), Contains("weight 'blk.0.") && Contains("plain weights only"));
        CHECK_THROWS_WITH(f.convert_it(kInt, "w8a16"), Contains("codes u4") && Contains("this plugin reads codes i8 u8"));
        // a norm quantised: its op takes plain weights
        CHECK_THROWS_WITH(f.convert_it("{token_embd.weight,position_embd.weight,*.bias}  cast\n"
                                       "*norm.weight  rtn bits=8 group=0\n"
                                       "*             rtn bits=8 group=32\n"),
                          Contains("norm.weight' is stored in encoding 'affine'") && Contains("takes plain weights only"));
        CHECK_FALSE(f.any_output());
    }
    Fixture f(GOLDEN_FIXTURES "/gpt2_tiny");  // GPT-2's learned positions are an embedding too
    CHECK_THROWS_WITH(f.convert_it("token_embd.weight cast\n*{norm,bias}* cast\n* rtn bits=8 group=32\n"),
                      Contains("weight 'position_embd.weight' is stored in encoding 'affine'"));
}

// The tied heads (gemma, gpt2 and llama's tied configs) are views of the embedding's table: the
// engine holds its bytes once (place_weights), so the weights take what the container stores and
// no more. Mutation (made, watched fail, undone): place_weights giving every weight a place of its
// own (the code before it) counts each embedding twice.
TEST_CASE("a tied head reads the embedding's bytes, not a copy of them", "[serve][families]") {
    for (const std::string dir :
         {GOLDEN_FIXTURES "/gemma2_softcap_w12", GOLDEN_FIXTURES "/gpt2_tiny", GOLDEN_FIXTURES "/llama_llama3rope_tied"}) {
        INFO(dir);
        Fixture f(dir);
        f.convert_it();
        auto r = container::Reader::open((f.dir / "out.rad").string());
        uint64_t stored = 0;
        for (const container::TensorInfo& t : r->tensors())
            stored += static_cast<uint64_t>(t.rows() * t.cols()) * rad_dtype_bits(r->encodings()[t.encoding].planes[0].dtype) / 8;
        CHECK(convtest::serve((f.dir / "out.rad").string(), {"libref"})->weight_bytes() == stored);
    }
}
