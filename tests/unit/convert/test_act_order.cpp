// GPTQ act-order served (the perm transform; docs/container.md): the llama fixture written as an
// act-order GPTQ folder by tools/quant_import/quantise_hf.py (a random g_idx) and imported, then
//   - served on the host: libref's logits are those of the same model decoded to plain f32 weights
//     (the unquantised plugin's gemm) bit for bit, libcpu's within its gemm tolerance, and both
//     pick the same greedy tokens;
//   - its table damaged in the container (not a permutation, out of range, not i32 [1 x K]):
//     refused when the engine is made, naming the weight;
//   - under tensor parallelism: the projections split by columns (attn_output, ffn_down) refused
//     at declare, naming the weight.
// (test_hf_import.cpp checks the import's decoded bits against an independent dequantisation.)
//
// Mutations each of these caught (made, watched fail, undone):
//   - the engine's load check (perm_problem) skipped: the three damaged values (repeated, past K,
//     negative) are no longer refused at load (the engine is made);
//   - Linear::issue leaving operand 7 out (the t.perm view declared, not passed): "serves the
//     dequantised model" fails on libref (bits), libcpu (tolerance) and the greedy tokens;
//   - Linear::declare's column-split refusal dropped: the tensor-parallel case fails (the engine's
//     load check still refuses blk.0.attn_output.weight by name, but not as tensor-parallel).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <span>
#include <sstream>

#include "quant_serving.h"
#include "radiance/container/container.h"
#include "radiance/convert/convert.h"
#include "radiance/core/registry.h"
#include "serve_logits.h"

using namespace radiance;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    fs::path dir;
    TempDir() {
        dir = fs::temp_directory_path() / ("rad_actorder_" + std::to_string(getpid()) + "_" + std::to_string(rand()));
        fs::create_directories(dir);
    }
    ~TempDir() { fs::remove_all(dir); }
};

// The fixture as an act-order GPTQ folder (quantise_hf.py `args`), imported into dir/q.rad.
fs::path act_order_container(const fs::path& dir, const std::string& args = "--format gptq_act") {
    const fs::path q = dir / "q";
    REQUIRE(std::system(
                ("python3 " QUANT_IMPORT_DIR "/quantise_hf.py " SHARED_LLAMA " " + q.string() + " " + args + " > /dev/null").c_str()) == 0);
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    const core::Registry reg = core::Registry::load(lo);
    convert::ConvertOptions o;
    o.src = q.string();
    o.out = (dir / "q.rad").string();
    std::ostringstream log;
    convert::convert(reg, o, log);
    return dir / "q.rad";
}

// A copy of `src` at `path` in which `edit` may change each tensor's encoding and plane bytes.
using Edit = std::function<void(const std::string& name, RadEncoding& e, std::vector<std::vector<uint8_t>>& planes)>;
void rewrite(const container::Reader& src, const fs::path& path, const Edit& edit) {
    container::Writer w(path.string());
    for (auto& [k, v] : src.meta()) w.set_meta(k, v);
    for (const container::TensorInfo& t : src.tensors()) {
        RadEncoding e = src.encodings()[t.encoding];
        std::vector<std::vector<uint8_t>> planes;
        for (size_t p = 0; p < t.planes.size(); ++p) {
            const uint8_t* d = src.plane_data(t, p);
            planes.emplace_back(d, d + t.planes[p].bytes);
        }
        edit(t.name, e, planes);
        std::vector<std::span<const uint8_t>> spans(planes.begin(), planes.end());
        w.add_tensor(t.name, w.add_encoding(e), t.shape, t.dtype, spans);
    }
    w.finish();
}

// Edits blk.0.attn_qkv.weight's t.perm table (its encoding and bytes; K values of i32).
Edit on_qkv_table(const std::function<void(RadPlaneDesc& d, std::vector<uint8_t>& table)>& f) {
    return [f](const std::string& name, RadEncoding& e, std::vector<std::vector<uint8_t>>& planes) {
        if (name != "blk.0.attn_qkv.weight") return;
        const int k = rad_encoding_plane(&e, "t.perm");
        REQUIRE(k >= 0);
        f(e.planes[k], planes[static_cast<size_t>(k)]);
    };
}

int32_t at(const std::vector<uint8_t>& table, size_t j) {
    int32_t v;
    std::memcpy(&v, table.data() + 4 * j, 4);
    return v;
}
void set(std::vector<uint8_t>& table, size_t j, int32_t v) { std::memcpy(table.data() + 4 * j, &v, 4); }

std::unique_ptr<engine::Engine> make_engine(const fs::path& rad, int world = 1) {
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    lo.kernels = std::vector<std::string>{"libref"};
    auto reg = std::make_shared<const core::Registry>(core::Registry::load(lo));
    engine::EngineOptions eo;
    eo.max_tok = 16;
    eo.max_seqs = 1;
    eo.max_ctx = 64;
    eo.world_size = world;
    eo.select.accept_reference = true;
    return engine::Engine::create(reg, std::shared_ptr<const container::Reader>(container::Reader::open(rad.string())), eo);
}

// The greedy pick of each logits row.
std::vector<size_t> greedy(const std::vector<float>& lg, size_t vocab) {
    std::vector<size_t> out;
    for (size_t r = 0; r + vocab <= lg.size(); r += vocab)
        out.push_back(static_cast<size_t>(std::max_element(lg.begin() + r, lg.begin() + r + vocab) - (lg.begin() + r)));
    return out;
}

}  // namespace

TEST_CASE("an act-order GPTQ import serves the dequantised model: libref to the bit, libcpu its greedy tokens", "[actorder][serve]") {
    TempDir t;
    const fs::path q = act_order_container(t.dir);
    auto r = container::Reader::open(q.string());
    int permuted = 0;
    for (const container::TensorInfo& ti : r->tensors()) permuted += std::string(r->encodings()[ti.encoding].transform) == "perm";
    CHECK(permuted == 2 * 4);  // every projection of both layers
    const fs::path plain = t.dir / "plain.rad";
    convtest::write_decoded(*r, plain.string());  // the core's decoder, the table scattering each row
    const auto lq = convtest::logits(q.string(), {"libref"}), lp = convtest::logits(plain.string(), {"libref"});
    REQUIRE(lq.size() == lp.size());
    CHECK(std::memcmp(lq.data(), lp.data(), lq.size() * 4) == 0);
    std::string report;
    const auto lc = convtest::logits(q.string(), {"libcpu", "libref"}, &report);
    INFO(report);
    CHECK(report.find("winner libcpu:cpu_gemm_q") != std::string::npos);
    CHECK(convtest::rel_rms(lc, lp) < 1e-4);
    const size_t vocab = lp.size() / 10;  // 9 prompt rows and a decode row
    CHECK(greedy(lc, vocab) == greedy(lp, vocab));
}

TEST_CASE("a perm table that is not a permutation of K columns, or not i32 [1 x K], is refused at load naming the weight",
          "[actorder][load]") {
    TempDir t;
    auto r = container::Reader::open(act_order_container(t.dir).string());
    const fs::path bad = t.dir / "bad.rad";
    auto refused = [&](const Edit& edit, const std::string& why) {
        fs::remove(bad);
        rewrite(*r, bad, edit);
        CHECK_THROWS_WITH(make_engine(bad), Contains("blk.0.attn_qkv.weight") && Contains(why));
    };
    SECTION("a column repeated") {
        refused(on_qkv_table([](RadPlaneDesc&, std::vector<uint8_t>& tb) { set(tb, 1, at(tb, 0)); }), "not a permutation");
    }
    SECTION("a value past K") {
        refused(on_qkv_table([](RadPlaneDesc& d, std::vector<uint8_t>& tb) { set(tb, 3, static_cast<int32_t>(d.cols)); }),
                "not a permutation");
    }
    SECTION("a negative value") {
        refused(on_qkv_table([](RadPlaneDesc&, std::vector<uint8_t>& tb) { set(tb, 0, -1); }), "not a permutation");
    }
    SECTION("u32 values") {
        refused(on_qkv_table([](RadPlaneDesc& d, std::vector<uint8_t>&) { d.dtype = RAD_U32; }), "i32 [1 x 64]");
    }
    SECTION("a table one column short") {
        refused(on_qkv_table([](RadPlaneDesc& d, std::vector<uint8_t>& tb) {
                    d.cols -= 1;
                    tb.resize(tb.size() - 4);
                }),
                "i32 [1 x 64]");
    }
}

// A weight split by columns (attn_output, ffn_down: each rank holds a slice of x in the weight's
// order) cannot be served with one table ordering the whole row; a split by rows (attn_qkv,
// ffn_gate_up) carries the table whole and is not what is refused.
TEST_CASE("under tensor parallelism an act-order weight split by columns is refused at declare, naming it", "[actorder][tp]") {
    TempDir t;
    const fs::path q = act_order_container(t.dir);
    CHECK_THROWS_WITH(make_engine(q, 2), Contains("blk.0.attn_output.weight") && Contains("permuted") && Contains("tensor-parallel"));
}
