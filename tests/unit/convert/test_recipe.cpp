// rad-convert's recipes: the language, what a recipe makes of each weight (encodings, the quant
// descriptor, the error report checked against an independent decode of the container), and the
// refusals, each naming the line, option or tensor, with nothing left at OUT.
//
// Mutations each of these caught (made in shared/convert, watched fail, undone): the glob's `*`
// stopping at a '.' fails "globs"; the last matching line winning instead of the first fails
// "recipe text" and "a recipe converts"; the report's error without its square root fails "a
// recipe converts"; dropping the strict check of unused lines fails "bad recipes" (a line that
// matches nothing); removing PartialFile's cleanup fails "a failure while writing leaves nothing";
// derive_quant answering "w8a16" for 4-bit codes fails "a recipe converts" (the w8a16 plugin then
// refuses u4 codes by name).
#include <catch2/catch.hpp>

#include <radiance/rad_decode.h>

#include <cmath>
#include <regex>

#include "convert_fixture.h"
#include "radiance/container/container.h"
#include "radiance/convert/recipe.h"
#include "radiance/engine/engine.h"
#include "radiance/util/error.h"

using namespace radiance;
using Catch::Matchers::Contains;
using convtest::Fixture;
namespace fs = std::filesystem;

namespace {

// ||checkpoint - decoded container|| / ||checkpoint|| for one stored weight, decoded by the core.
double stored_error(const container::Reader& r, const std::string& name, const std::vector<float>& want) {
    const container::TensorInfo* t = r.find(name);
    REQUIRE(t);
    std::vector<const void*> planes;
    for (size_t p = 0; p < t->planes.size(); ++p) planes.push_back(r.plane_data(*t, p));
    std::vector<float> got(static_cast<size_t>(t->rows() * t->cols()));
    REQUIRE(rad_decode_rows(&r.encodings()[t->encoding], t->rows(), t->cols(), 0, t->rows(), planes.data(), got.data()) == RAD_OK);
    REQUIRE(got.size() == want.size());
    double d = 0, n = 0;
    for (size_t i = 0; i < got.size(); ++i) {
        d += (static_cast<double>(got[i]) - want[i]) * (static_cast<double>(got[i]) - want[i]);
        n += static_cast<double>(want[i]) * want[i];
    }
    return std::sqrt(d / n);
}

// A checkpoint tensor's values (bf16 or f32) as f32; several stack along dim 0.
std::vector<float> values(const Fixture& f, std::initializer_list<const char*> names) {
    std::vector<float> out;
    for (const char* n : names) {
        const auto& [t, bytes] = f.tensors.at(n);
        const size_t count = bytes.size() / static_cast<size_t>(rad_dtype_bits(t.dtype) / 8);
        for (size_t i = 0; i < count; ++i) out.push_back(rad_load_f32(t.dtype, bytes.data(), static_cast<int64_t>(i)));
    }
    return out;
}

// The error the container's recipe section reports for `name`.
double reported_error(const std::string& recipe, const std::string& name) {
    std::smatch m;
    REQUIRE(std::regex_search(recipe, m,
                              std::regex("\n  " + std::regex_replace(name, std::regex("\\."), "\\.") + " [^\n]*rel error ([0-9.e-]+)")));
    return std::stod(m[1].str());
}

const char* kMixed =
    "# the embedding and norms kept, layer 0 at int4 with zero points, the rest int8\n"
    "token_embd.weight   cast dtype=bf16\n"
    "*norm*              cast dtype=f32\n"
    "blk.0.*             rtn bits=4 group=32 zero=1\n"
    "*                   rtn bits=8 group=32\n";

}  // namespace

TEST_CASE("globs: *, ?, {a,b}, always the whole name", "[recipe]") {
    using convert::glob_match;
    CHECK(glob_match("blk.*.ffn_down.weight", "blk.12.ffn_down.weight"));
    CHECK_FALSE(glob_match("blk.*.ffn_down.weight", "blk.1.ffn_down.weight.scale"));
    CHECK(glob_match("*{norm,bias}*", "blk.0.attn_norm.weight"));
    CHECK(glob_match("*{norm,bias}*", "blk.0.attn_qkv.bias"));
    CHECK_FALSE(glob_match("*{norm,bias}*", "blk.0.attn_qkv.weight"));
    CHECK(glob_match("blk.?.attn*", "blk.3.attn_qkv.weight"));
    CHECK_FALSE(glob_match("blk.?.attn*", "blk.12.attn_qkv.weight"));
    CHECK_FALSE(glob_match("output.weight", "output_weight"));  // '.' is itself
    CHECK(glob_match("*", ""));
    CHECK(glob_match("blk.*", "blk.0.attn_qkv.weight"));
    CHECK(glob_match("{blk.1,blk.2}.*", "blk.2.ffn_down.weight"));
    CHECK_FALSE(glob_match("{blk.1,blk.2}.*", "blk.12.ffn_down.weight"));
}

TEST_CASE("recipe text: comments, blank lines and options; a malformed line is named", "[recipe]") {
    auto r = convert::parse_recipe("# a comment\n\n  blk.* rtn bits=4  group=64   # why\n* cast\n", "my.recipe");
    REQUIRE(r.rules.size() == 2);
    CHECK(r.rules[0].line == 3);
    CHECK(r.rules[0].pattern == "blk.*");
    CHECK(r.rules[0].quantizer == "rtn");
    CHECK(r.rules[0].options == std::vector<std::pair<std::string, std::string>>{{"bits", "4"}, {"group", "64"}});
    CHECK(r.rules[1].line == 4);
    CHECK(r.strict);
    CHECK(convert::match(r, "blk.0.x")->line == 3);  // the first matching line wins
    CHECK(convert::match(r, "output.weight")->line == 4);
    CHECK_THROWS_WITH(convert::parse_recipe("x\nblk.*  \n", "my.recipe"), Contains("my.recipe line 1") && Contains("names no quantiser"));
    CHECK_THROWS_WITH(convert::parse_recipe("* rtn bits 4\n", "r"), Contains("line 1") && Contains("'bits' is not an option"));
    CHECK_THROWS_WITH(convert::parse_recipe("* bits=4\n", "r"), Contains("where the quantiser's name belongs"));
    CHECK_THROWS_WITH(convert::parse_recipe("# only a comment\n", "r"), Contains("no lines"));
    CHECK_THROWS_WITH(convert::load_recipe("int9"), Contains("int9") && Contains("int8, int4, fp8"));
    CHECK_FALSE(convert::load_recipe("int8").strict);
}

TEST_CASE("a recipe converts: the first matching line's encoding, the descriptor from the codes, an error report", "[recipe]") {
    Fixture f;
    const std::string log = f.convert_it(kMixed);
    auto r = container::Reader::open((f.dir / "out.rad").string());
    CHECK(r->meta().at("arch.quant").s == "w4a16");  // 4-bit codes (and 8-bit ones: w4a16 reads both)
    auto enc = [&](const char* n) { return r->encodings()[r->find(n)->encoding]; };
    CHECK(std::string(enc("token_embd.weight").scheme) == "plain");
    CHECK(enc("token_embd.weight").planes[0].dtype == RAD_BF16);
    CHECK(enc("blk.0.attn_norm.weight").planes[0].dtype == RAD_F32);
    CHECK(std::string(enc("blk.0.attn_qkv.weight").scheme) == "affine");
    CHECK(enc("blk.0.attn_qkv.weight").planes[0].dtype == RAD_U4);
    const RadEncoding down0 = enc("blk.0.ffn_down.weight");
    CHECK(rad_encoding_plane(&down0, "zero") >= 0);
    CHECK(enc("blk.1.attn_qkv.weight").planes[0].dtype == RAD_I8);
    CHECK(enc("output.weight").planes[0].dtype == RAD_I8);
    CHECK(enc("blk.1.ffn_gate_up.weight").planes[1].block_c == 32);
    CHECK_NOTHROW(r->verify_planes());
    // the error report: one line a weight in the recipe section, each the error an independent
    // decode of the container measures against the checkpoint
    const std::string recipe = *r->blob(container::Section::Recipe);
    CHECK_THAT(recipe, Contains("architecture llama quant \"w4a16\"") && Contains("blk.0.*             rtn bits=4 group=32 zero=1"));
    const auto qkv1 = values(
        f, {"model.layers.1.self_attn.q_proj.weight", "model.layers.1.self_attn.k_proj.weight", "model.layers.1.self_attn.v_proj.weight"});
    const double e1 = stored_error(*r, "blk.1.attn_qkv.weight", qkv1);
    CHECK(reported_error(recipe, "blk.1.attn_qkv.weight") == Approx(e1).epsilon(1e-3));
    CHECK(e1 < 0.01);  // int8, groups of 32
    const double e0 = stored_error(*r, "blk.0.ffn_down.weight", values(f, {"model.layers.0.mlp.down_proj.weight"}));
    CHECK(reported_error(recipe, "blk.0.ffn_down.weight") == Approx(e0).epsilon(1e-3));
    CHECK(e0 > 0.03);  // int4
    CHECK(e0 < 0.15);
    CHECK(reported_error(recipe, "blk.0.attn_norm.weight") == 0);  // bf16 to f32: exact
    // a progress line a stored weight
    size_t lines = 0;
    for (size_t at = log.find("\n["); at != std::string::npos; at = log.find("\n[", at + 1)) ++lines;
    CHECK(lines + (log.rfind("[", 0) == 0) == r->tensors().size());
}

TEST_CASE("bad recipes are refused before anything is written, naming the line, option and tensor", "[recipe]") {
    Fixture f;
    SECTION("a line that matches nothing") {
        CHECK_THROWS_WITH(f.convert_it(std::string(kMixed) + "blk.7.* rtn\n"),
                          Contains("line 6 (blk.7.* rtn) matches no weight of this model"));
    }
    SECTION("an unknown quantiser") {
        CHECK_THROWS_WITH(f.convert_it("* gptq9 bits=4\n"),
                          Contains("line 1 (* gptq9 bits=4)") && Contains("no quantiser 'gptq9'") && Contains("rtn, fp8, cast"));
    }
    SECTION("an unknown option, a value of the wrong type") {
        CHECK_THROWS_WITH(f.convert_it("*norm* cast\n* rtn bitz=4 group=x\n"),
                          Contains("line 2") && Contains("no option 'bitz'") && Contains("bits, group, zero, scale"));
        CHECK_THROWS_WITH(f.convert_it("* rtn bits=4 group=x\n"), Contains("group=x is not an integer"));
        CHECK_THROWS_WITH(f.convert_it("* rtn bits=5\n"), Contains("refuses the values bits=5") && Contains("bits (default 8)"));
    }
    SECTION("a group that does not divide the row") {
        CHECK_THROWS_WITH(f.convert_it("token_embd.weight cast\n*norm* cast\n* rtn group=128\n"),
                          Contains("line 3 (* rtn group=128)") && Contains("'blk.0.attn_qkv.weight' [128, 64]") &&
                              Contains("group=128 does not divide its rows of 64 columns"));
        CHECK_THROWS_WITH(f.convert_it("int8"), Contains("preset int8") && Contains("group=128 does not divide"));
    }
    SECTION("a weight no line matches") {
        CHECK_THROWS_WITH(f.convert_it("blk.* rtn group=32\n"),
                          Contains("weight 'token_embd.weight' [512, 64] matches no line") && Contains("weight 'output_norm.weight'"));
    }
    CHECK_FALSE(f.any_output());
}

TEST_CASE("a failure while writing leaves nothing at OUT", "[recipe]") {
    Fixture f;
    auto& [t, bytes] = f.tensors["model.layers.1.mlp.down_proj.weight"];
    REQUIRE(t.dtype == RAD_BF16);
    const uint16_t nan = 0x7fc0;
    std::memcpy(&bytes[2 * (3 * 160 + 5)], &nan, 2);  // row 3, column 5
    CHECK_THROWS_WITH(f.convert_it(kMixed),
                      Contains("weight 'blk.1.ffn_down.weight' has a non-finite value") && Contains("row 3, column 5"));
    CHECK_FALSE(f.any_output());
}

TEST_CASE("the quant descriptor: derived from the codes or named; a pair no plugin serves is refused by name", "[recipe]") {
    Fixture f;
    f.convert_it("* cast dtype=f16\n");  // floats only: the unquantised plugin
    auto r = container::Reader::open((f.dir / "out.rad").string());
    CHECK(r->meta().at("arch.quant").s == "");
    CHECK(r->encodings()[r->find("blk.0.attn_qkv.weight")->encoding].planes[0].dtype == RAD_F16);
    fs::remove(f.dir / "out.rad");
    f.convert_it("token_embd.weight cast\n*norm* cast\n* fp8 block=32\n");
    r = container::Reader::open((f.dir / "out.rad").string());
    CHECK(r->meta().at("arch.quant").s == "fp8_e4m3");
    CHECK(r->encodings()[r->find("output.weight")->encoding].planes[1].block_r == 32);
    fs::remove(f.dir / "out.rad");
    CHECK_THROWS_WITH(f.convert_it("token_embd.weight cast\n*norm* cast\nblk.0.* fp8\n* rtn group=32\n"),
                      Contains("fp8 and integer codes mixed") && Contains("--quant"));
    CHECK_THROWS_WITH(f.convert_it(kMixed, "w9a16"),
                      Contains("no architecture plugin serves (llama, \"w9a16\")") && Contains("(llama, \"w8a16\")"));
    // the unquantised plugin asked to serve quantised weights refuses them by name
    CHECK_THROWS_WITH(f.convert_it(kMixed, ""),
                      Contains("weight 'blk.0.attn_qkv.weight' is stored in encoding 'affine'") && Contains("plain weights only"));
    // and the w8a16 plugin refuses 4-bit codes
    CHECK_THROWS_WITH(f.convert_it(kMixed, "w8a16"), Contains("codes u4") && Contains("this plugin reads codes i8 u8"));
    CHECK_FALSE(f.any_output());
}

TEST_CASE("a container whose quant no loaded plugin claims is refused by name, never dequantised", "[recipe]") {
    Fixture f;
    f.convert_it(kMixed);
    // a home with the unquantised llama plugin and libref only: no (llama, "w4a16")
    const fs::path home = f.dir / "home";
    fs::create_directories(home / "architectures");
    fs::create_directories(home / "kernels");
    fs::copy_file(fs::path(RAD_BUILD_HOME_DIR) / "architectures" / "libarch_llama.so", home / "architectures" / "libarch_llama.so");
    fs::copy_file(fs::path(RAD_BUILD_HOME_DIR) / "kernels" / "libref.so", home / "kernels" / "libref.so");
    core::LoadOptions lo;
    lo.homes = {home.string()};
    auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
    auto model = std::shared_ptr<const container::Reader>(container::Reader::open((f.dir / "out.rad").string()));
    engine::EngineOptions eo;
    eo.select.accept_reference = true;
    CHECK_THROWS_WITH(engine::Engine::create(reg, model, eo), Contains("no architecture plugin serves (llama, \"w4a16\")"));
}
