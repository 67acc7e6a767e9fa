// Hugging Face checkpoints already quantised (libquant's `import`): the llama fixture written as a
// GPTQ, AWQ or fp8 folder by tools/quant_import/quantise_hf.py (the formats' published packings),
// converted with no recipe (config.json's quantization_config makes rad-convert import it); GPTQ
// act-order (a random g_idx) as the perm transform. The reference is independent of radiance's
// code and of the packer: tools/quant_import/dequant_hf.py reads the same folder as AutoGPTQ /
// AutoAWQ / transformers dequantise it (g_idx honoured), into f32 safetensors, converted plainly. Every weight decodes to the reference's bits, and on libref, whose gemm_q is
// "the core's decode, then gemm's arithmetic", the two containers' logits are equal bit for bit;
// libcpu's gemm_q rows serve the import within their summation-order tolerance.
//
// Mutations each of these caught (made, watched fail, undone):
//   - AWQ nibbles read in the packing order [0,2,4,6,1,3,5,7] instead of its inverse: "AWQ" fails
//   - GPTQ zeros without the +1 of checkpoint_format "gptq": the three gptq-format cases fail (gptq_v2 passes)
//   - the +1 applied to gptq_v2 too: "GPTQ (gptq_v2, symmetric: i4 codes)" fails
//   - act-order's perm left the identity (the codes not reordered, no stable sort of g_idx): both
//     act-order imports fail (decoded bits and logits), "fused parts in different orders" is no
//     longer refused
//   - act-order's groups not counted: "groups are not group_size columns" no longer names them
//   - a fused weight's parts not compared for one order: "fused parts in different orders" passes
//     through the import
//   - no look for a stray g_idx (AWQ) or weight_g_idx (compressed-tensors): both import, their
//     order ignored, and their sections fail
//   - int4 scales indexed [n][g] instead of [g][n]: the four GPTQ cases and AWQ fail
//   - fp8 block scales' rows not split at the fused parts (gcd dropped): "fine-grained fp8" fails
//   - a per-channel (and block) scale read as the tensor's one: "per channel" and "fine-grained fp8" fail
//   - nibble 15 of the gptq format accepted: "zero point 16 of the gptq format" is no longer refused
//   - compressed-tensors int8 codes typed u8: "int8 (int-quantized)" fails
//   - a symmetric GPTQ's i4 codes stored as the raw nibble (not minus 8): "symmetric: i4 codes" fails
//   - a compressed-tensors block grid taken for per-channel scales: "fp8 with block scales" fails
// (each run on the libquant plugin alone; the explicit-recipe case compares two imports, so it
// passes under all of them by design), and in the converter:
//   - no check that a weight stored quantised goes to import: the "another quantiser" refusal no
//     longer says why (rtn is handed no values and fails while writing)
//   - a fused weight's sources cut to its first part: every import but the refusals fails
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <radiance/rad_decode.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "radiance/container/container.h"
#include "radiance/convert/convert.h"
#include "radiance/core/registry.h"
#include "serve_logits.h"

using namespace radiance;
using convtest::logits;
namespace fs = std::filesystem;

namespace {

int run(const std::string& cmd) { return std::system((cmd + " > /dev/null").c_str()); }

const core::Registry& registry() {
    static core::Registry reg = [] {
        core::LoadOptions lo;
        lo.homes = {RAD_BUILD_HOME_DIR};
        return core::Registry::load(lo);
    }();
    return reg;
}

// A temporary folder, removed with everything in it.
struct TempDir {
    fs::path dir;
    TempDir() {
        dir = fs::temp_directory_path() / ("rad_hfimport_" + std::to_string(getpid()) + "_" + std::to_string(rand()));
        fs::create_directories(dir);
    }
    ~TempDir() { fs::remove_all(dir); }
};

// Converts `src` to `out` (a recipe file's text, or none: the automatic import); the converter's
// stderr (the quantiser's refusals) lands in *err, its exception's text is returned ("" when none).
std::string convert_to(const fs::path& src, const fs::path& out, const std::string& recipe = "", std::string* err = nullptr) {
    convert::ConvertOptions o;
    o.src = src.string();
    o.out = out.string();
    if (!recipe.empty()) {
        o.recipe = (out.parent_path() / "recipe.txt").string();
        std::ofstream(o.recipe) << recipe;
    }
    const fs::path err_path = out.parent_path() / "stderr.txt";
    std::fflush(stderr);
    const int saved = dup(2), fd = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    ::close(fd);
    std::string what;
    try {
        std::ostringstream log;
        convert::convert(registry(), o, log);
    } catch (const std::exception& e) {
        what = e.what();
    }
    std::fflush(stderr);
    dup2(saved, 2);
    ::close(saved);
    if (err) {
        std::ifstream in(err_path);
        std::ostringstream s;
        s << in.rdbuf();
        *err = s.str();
    }
    return what;
}

// The fixture written in `format` (quantise_hf.py's --format and extra arguments) under dir/q.
fs::path quantised(const fs::path& dir, const std::string& args) {
    const fs::path q = dir / "q";
    REQUIRE(run("python3 " QUANT_IMPORT_DIR "/quantise_hf.py " SHARED_LLAMA " " + q.string() + " " + args) == 0);
    return q;
}

void edit_config(const fs::path& folder, const std::function<void(nlohmann::json&)>& f) {
    nlohmann::json cfg;
    std::ifstream(folder / "config.json") >> cfg;
    f(cfg);
    std::ofstream(folder / "config.json") << cfg.dump(2);
}

// Every tensor decoded by the core to f32 (plain and affine alike).
std::map<std::string, std::vector<float>> decoded(const container::Reader& r) {
    std::map<std::string, std::vector<float>> out;
    for (const container::TensorInfo& t : r.tensors()) {
        std::vector<const void*> planes;
        for (size_t p = 0; p < t.planes.size(); ++p) planes.push_back(r.plane_data(t, p));
        std::vector<float> v(static_cast<size_t>(t.rows() * t.cols()));
        REQUIRE(rad_decode_rows(&r.encodings()[t.encoding], t.rows(), t.cols(), 0, t.rows(), planes.data(), v.data()) == RAD_OK);
        out[t.name] = std::move(v);
    }
    return out;
}

// The fixture in `args`' format, imported automatically, against dequant_hf.py's reference:
// every projection stored with codes of `codes`, the descriptor `want_quant`, every weight's
// decoded bits the reference's, libref's logits bit for bit, libcpu's within its tolerance.
void import_matches_reference(const std::string& args, const char* codes, const char* want_quant,
                              const std::function<void(const fs::path&)>& edit = nullptr, const char* transform = "") {
    TempDir t;
    const fs::path q = quantised(t.dir, args), ref = t.dir / "ref";
    if (edit) edit(q);
    REQUIRE(run("python3 " QUANT_IMPORT_DIR "/dequant_hf.py " + q.string() + " " + ref.string()) == 0);
    std::string err;
    const std::string what = convert_to(q, t.dir / "q.rad", "", &err);
    INFO(what + "\n" + err);
    REQUIRE(what.empty());
    REQUIRE(convert_to(ref, t.dir / "ref.rad").empty());
    auto qr = container::Reader::open((t.dir / "q.rad").string());
    auto rr = container::Reader::open((t.dir / "ref.rad").string());
    CHECK(qr->meta().at("arch.quant").s == want_quant);
    int n_quantised = 0;
    for (const container::TensorInfo& ti : qr->tensors()) {
        const RadEncoding& e = qr->encodings()[ti.encoding];
        if (ti.name.find("blk.") == 0 && ti.name.find("norm") == std::string::npos) {
            INFO(ti.name);
            CHECK(std::string(e.scheme) == "affine");
            CHECK(std::string(rad_dtype_name(e.planes[0].dtype)) == codes);
            CHECK(std::string(e.transform) == transform);
            ++n_quantised;
        } else {
            CHECK(std::string(e.scheme) == "plain");  // embedding, norms, head: as stored
        }
    }
    CHECK(n_quantised == 2 * 4);  // attn_qkv, attn_output, ffn_gate_up, ffn_down a layer
    const auto dq = decoded(*qr), dr = decoded(*rr);
    REQUIRE(dq.size() == dr.size());
    for (auto& [name, v] : dq) {
        INFO(name);
        REQUIRE(dr.count(name));
        REQUIRE(dr.at(name).size() == v.size());
        CHECK(std::memcmp(v.data(), dr.at(name).data(), v.size() * 4) == 0);
    }
    const auto lq = logits((t.dir / "q.rad").string(), {"libref"}), lr = logits((t.dir / "ref.rad").string(), {"libref"});
    REQUIRE(lq.size() == lr.size());
    CHECK(std::memcmp(lq.data(), lr.data(), lq.size() * 4) == 0);
    std::string report;
    const auto lc = logits((t.dir / "q.rad").string(), {"libcpu", "libref"}, &report);
    INFO(report);
    CHECK(report.find("winner libcpu:cpu_gemm_q") != std::string::npos);  // libcpu's own rows, not libref's
    double diff = 0, norm = 0;
    for (size_t i = 0; i < lr.size(); ++i) diff += (lc[i] - lr[i]) * (lc[i] - lr[i]), norm += lr[i] * lr[i];
    CHECK(std::sqrt(diff / norm) < 1e-4);
}

// The fixture in `args`' format, damaged by `edit`, must be refused before anything is written:
// the exception names the weight, the quantiser's stderr each of `said`.
void refused(const std::string& args, const std::vector<std::string>& said, const std::function<void(const fs::path&)>& edit = nullptr,
             const std::string& recipe = "") {
    TempDir t;
    const fs::path q = quantised(t.dir, args);
    if (edit) edit(q);
    std::string err;
    const std::string what = convert_to(q, t.dir / "out.rad", recipe, &err);
    INFO(what + "\n--- stderr:\n" + err);
    CHECK(!what.empty());
    for (const std::string& s : said) CHECK((what + err).find(s) != std::string::npos);
    CHECK(!fs::exists(t.dir / "out.rad"));
    CHECK(!fs::exists(t.dir / "out.rad.partial"));
}

}  // namespace

TEST_CASE("GPTQ (checkpoint_format gptq: zeros stored minus one) imports as AutoGPTQ dequantises it", "[hfimport]") {
    import_matches_reference("--format gptq", "u4", "w4a16");
}

TEST_CASE("GPTQ (gptq_v2, symmetric: i4 codes) imports as GPTQModel dequantises it", "[hfimport]") {
    import_matches_reference("--format gptq_v2 --sym", "i4", "w4a16");  // every zero 8: i4 codes, no zero plane
}

TEST_CASE("GPTQ with desc_act whose g_idx is the plain k / group imports", "[hfimport]") {
    import_matches_reference("--format gptq", "u4", "w4a16", [](const fs::path& q) {
        edit_config(q, [](nlohmann::json& c) { c["quantization_config"]["desc_act"] = true; });
    });
}

// Act-order: g_idx a random order of the columns cut into groups (quantise_hf.py --act), imported
// as the perm transform. The reference honours g_idx as AutoGPTQ does, so every weight decodes to
// its bits, and libref (whose gemm_q decodes in the weight's own column order) serves the
// reference's logits bit for bit; libcpu gathers x by the table and sums in stored order.
TEST_CASE("GPTQ act-order (desc_act, a random g_idx) imports as the perm transform, as AutoGPTQ dequantises it", "[hfimport]") {
    import_matches_reference("--format gptq_act", "u4", "w4a16", nullptr, "perm");
}

TEST_CASE("GPTQ act-order in the gptq_v2 format, symmetric (i4 codes), imports as the perm transform", "[hfimport]") {
    import_matches_reference("--format gptq_v2 --act --sym", "i4", "w4a16", nullptr, "perm");
}

TEST_CASE("GPTQ in two shards with an index (a linear's tensors in different files) imports", "[hfimport]") {
    import_matches_reference("--format gptq --shards 2", "u4", "w4a16");
}

TEST_CASE("AWQ (GEMM packing, its nibble order) imports as AutoAWQ dequantises it", "[hfimport]") {
    import_matches_reference("--format awq", "u4", "w4a16");
}

TEST_CASE("fine-grained fp8 (128 x 128 block scales) imports as transformers dequantises it", "[hfimport]") {
    import_matches_reference("--format fp8", "fp8_e4m3", "fp8_e4m3");
}

TEST_CASE("compressed-tensors fp8 with a scale per channel imports", "[hfimport]") {
    import_matches_reference("--format ct_fp8_channel", "fp8_e4m3", "fp8_e4m3");
}

TEST_CASE("compressed-tensors fp8 per tensor imports", "[hfimport]") {
    import_matches_reference("--format ct_fp8_tensor", "fp8_e4m3", "fp8_e4m3");
}

TEST_CASE("compressed-tensors fp8 with block scales imports", "[hfimport]") {
    import_matches_reference("--format ct_fp8_block", "fp8_e4m3", "fp8_e4m3");
}

TEST_CASE("compressed-tensors int8 (int-quantized) with a scale per channel imports at w8a16", "[hfimport]") {
    import_matches_reference("--format ct_int8_channel", "i8", "w8a16");
}

TEST_CASE("an explicit recipe line `PATTERN import` imports the same numbers", "[hfimport]") {
    TempDir t;
    const fs::path q = quantised(t.dir, "--format awq");
    REQUIRE(convert_to(q, t.dir / "auto.rad").empty());
    std::string err;
    const std::string what = convert_to(q, t.dir / "explicit.rad", "blk.* import\n* cast dtype=bf16\n", &err);
    INFO(what + err);
    REQUIRE(what.empty());
    auto a = container::Reader::open((t.dir / "auto.rad").string()), b = container::Reader::open((t.dir / "explicit.rad").string());
    CHECK(b->meta().at("arch.quant").s == "w4a16");
    const auto da = decoded(*a), db = decoded(*b);
    REQUIRE(da.size() == db.size());
    for (auto& [name, v] : da) {
        INFO(name);
        CHECK(std::memcmp(v.data(), db.at(name).data(), v.size() * 4) == 0);
    }
}

TEST_CASE("what is not imported is refused before anything is written, naming the weight, field and file", "[hfimport]") {
    auto config = [](std::function<void(nlohmann::json&)> f) { return [f](const fs::path& q) { edit_config(q, f); }; };
    SECTION("act-order whose groups are not group_size columns each") {
        refused("--format gptq_act --damage act_uneven_group", {"blk.0.attn_qkv.weight", "model.layers.0.self_attn.q_proj.g_idx",
                                                                "model.safetensors", "33 columns in group 0", "not group_size 32"});
    }
    SECTION("act-order fused parts (q, k, v) in different orders") {
        refused("--format gptq_act --damage act_parts_differ",
                {"blk.0.attn_qkv.weight", "model.layers.0.self_attn.q_proj and model.layers.0.self_attn.k_proj", "act-order"});
    }
    SECTION("an AWQ linear with a g_idx (AWQ has no act-order)") {
        refused("--format awq --damage stray_g_idx",
                {"blk.0.attn_qkv.weight", "model.layers.0.self_attn.q_proj.g_idx", "model.safetensors", "AWQ"});
    }
    SECTION("compressed-tensors act-order (a weight_g_idx)") {
        refused("--format ct_int8_channel --damage stray_g_idx",
                {"blk.0.attn_qkv.weight", "model.layers.0.self_attn.q_proj.weight_g_idx", "model.safetensors", "act-order"});
    }
    SECTION("3-bit GPTQ") {
        refused("--format gptq", {"blk.0.attn_qkv.weight", "quantization_config.bits is 3", "config.json"},
                config([](nlohmann::json& c) { c["quantization_config"]["bits"] = 3; }));
    }
    SECTION("8-bit AWQ") {
        refused("--format awq", {"quantization_config.bits is 8", "config.json"},
                config([](nlohmann::json& c) { c["quantization_config"]["bits"] = 8; }));
    }
    SECTION("a marlin packing") {
        refused("--format gptq", {"quantization_config.checkpoint_format is 'marlin'", "config.json"},
                config([](nlohmann::json& c) { c["quantization_config"]["checkpoint_format"] = "marlin"; }));
    }
    SECTION("AWQ's GEMV packing") {
        refused("--format awq", {"quantization_config.version is 'gemv'"},
                config([](nlohmann::json& c) { c["quantization_config"]["version"] = "gemv"; }));
    }
    SECTION("exllama v2 (quant_method exl2)") {
        refused("--format gptq", {"quant_method 'exl2'", "config.json"},
                config([](nlohmann::json& c) { c["quantization_config"]["quant_method"] = "exl2"; }));
    }
    SECTION("no qzeros") {
        refused("--format awq --damage drop_qzeros",
                {"blk.0.attn_qkv.weight", "model.layers.0.self_attn.q_proj.qzeros is missing", "model.safetensors"});
    }
    SECTION("scales of the wrong shape") {
        refused("--format gptq --damage short_scales", {"model.layers.0.self_attn.q_proj.scales", "model.safetensors", "[1, 64]"});
    }
    SECTION("a group size that does not divide K") {
        refused("--format gptq", {"quantization_config.group_size 48", "does not divide"},
                config([](nlohmann::json& c) { c["quantization_config"]["group_size"] = 48; }));
    }
    SECTION("zero point 16 of the gptq format") {
        refused("--format gptq --damage zero_nibble_15", {"model.layers.0.self_attn.q_proj.qzeros", "nibble 15"});
    }
    SECTION("asymmetric fp8") {
        refused("--format ct_fp8_channel", {"symmetric is false", "config.json"},
                config([](nlohmann::json& c) { c["quantization_config"]["config_groups"]["group_0"]["weights"]["symmetric"] = false; }));
    }
    SECTION("a weight stored quantised given to another quantiser") {
        refused("--format gptq", {"blk.0.attn_qkv.weight", "stored quantised", "model.layers.0.self_attn.q_proj.qweight", "import"},
                nullptr, "* rtn bits=4\n");
    }
}
