// gguf_import_util.h: what the GGUF import tests share: a fixture exported as a GGUF file by
// tools/gguf/export_gguf.py and imported with `* ggml file=`, against the reference container of
// tools/gguf/dequant_gguf.py's f32 weights; and a hand-made GGUF for the refusals.
#pragma once
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "convert_fixture.h"
#include "radiance/container/container.h"
#include "serve_logits.h"

namespace convtest {

inline int run(const std::string& cmd) { return std::system((cmd + " > /dev/null").c_str()); }

// `gguf` imported beside `f`'s folder into out.rad (whose descriptor must be `want_quant`), and
// the reference container of dequant_gguf.py's f32 weights written beside it; on libref the two
// containers' logits are equal bit for bit. `head`: recipe lines before `* ggml` (a qwen2's fused
// bias: cast). Returns the imported container's path.
inline std::string import_file_and_reference(Fixture& f, const std::string& gguf, const char* want_quant, const std::string& head = "") {
    const std::string ref = (f.dir / "ref").string();
    fs::remove(f.dir / "out.rad");
    f.convert_it(head + "* ggml file=" + gguf + "\n");
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
    return (f.dir / "out.rad").string();
}

// `f`'s folder exported to a GGUF of `qtype` by export_gguf.py (m.gguf), then
// import_file_and_reference.
inline std::string import_and_reference(Fixture& f, const char* qtype, const char* want_quant, const std::string& head = "") {
    f.convert_it();  // writes the folder (and an unquantised out.rad, replaced)
    const std::string gguf = (f.dir / "m.gguf").string();
    REQUIRE(run("python3 " EXPORT_GGUF " " + f.dir.string() + " " + gguf + " --type " + qtype) == 0);
    return import_file_and_reference(f, gguf, want_quant, head);
}

// The fixture replaced by a one-layer llama whose every projection has rows of whole K-quant
// super-blocks (256 or 512 values): random bf16 weights, the same every run. `family` qwen2 adds
// q/k/v biases, qwen3 per-head q/k norms.
inline void wide_llama(Fixture& f, const std::string& family = "llama") {
    const int64_t d = 256, ff = 512, vocab = 512, hd = 64, heads = 4, kv = 2;
    f.config["hidden_size"] = d;
    f.config["intermediate_size"] = ff;
    f.config["num_hidden_layers"] = 1;
    f.config["num_attention_heads"] = heads;
    f.config["num_key_value_heads"] = kv;
    f.config["head_dim"] = hd;
    f.config["vocab_size"] = vocab;
    f.config["model_type"] = family;
    f.config["architectures"] = {family == "llama" ? "LlamaForCausalLM" : family == "qwen2" ? "Qwen2ForCausalLM" : "Qwen3ForCausalLM"};
    f.tensors.clear();
    std::mt19937 rng(37);
    std::normal_distribution<float> dist(0.0f, 0.05f);
    auto add = [&](const std::string& name, std::vector<int64_t> shape, float offset = 0.0f) {
        int64_t n = 1;
        for (int64_t e : shape) n *= e;
        std::vector<uint8_t> bytes(static_cast<size_t>(2 * n));
        for (int64_t i = 0; i < n; ++i) {
            const float v = dist(rng) + offset;
            uint32_t u;
            std::memcpy(&u, &v, 4);
            const uint16_t h = static_cast<uint16_t>(u >> 16);
            std::memcpy(&bytes[static_cast<size_t>(2 * i)], &h, 2);
        }
        convert::StTensor t;
        t.name = name;
        t.dtype = RAD_BF16;
        t.shape = shape;
        f.tensors[name] = {t, bytes};
    };
    add("model.embed_tokens.weight", {vocab, d});
    add("model.layers.0.input_layernorm.weight", {d}, 1.0f);
    add("model.layers.0.post_attention_layernorm.weight", {d}, 1.0f);
    add("model.layers.0.self_attn.q_proj.weight", {heads * hd, d});
    add("model.layers.0.self_attn.k_proj.weight", {kv * hd, d});
    add("model.layers.0.self_attn.v_proj.weight", {kv * hd, d});
    add("model.layers.0.self_attn.o_proj.weight", {d, heads * hd});
    if (family == "qwen2") {
        add("model.layers.0.self_attn.q_proj.bias", {heads * hd});
        add("model.layers.0.self_attn.k_proj.bias", {kv * hd});
        add("model.layers.0.self_attn.v_proj.bias", {kv * hd});
    }
    if (family == "qwen3") {
        add("model.layers.0.self_attn.q_norm.weight", {hd}, 1.0f);
        add("model.layers.0.self_attn.k_norm.weight", {hd}, 1.0f);
    }
    // gate's values all positive in part: Q4_K's sub-blocks with a nonzero min and with none
    add("model.layers.0.mlp.gate_proj.weight", {ff, d}, 0.02f);
    add("model.layers.0.mlp.up_proj.weight", {ff, d});
    add("model.layers.0.mlp.down_proj.weight", {d, ff});
    add("model.norm.weight", {d}, 1.0f);
    add("lm_head.weight", {vocab, d});
}

// The imported container on libcpu first (libref where its rows refuse) against libref alone:
// only the order of the sums differs.
inline void libcpu_close(const std::string& rad) {
    std::string report;
    const auto lc = logits(rad, {"libcpu", "libref"}, &report), lr = logits(rad, {"libref"});
    INFO(report);
    CHECK(report.find("cpu_gemm_q") != std::string::npos);
    REQUIRE(lc.size() == lr.size());
    double diff = 0, norm = 0;
    for (size_t i = 0; i < lr.size(); ++i) diff += (lc[i] - lr[i]) * (lc[i] - lr[i]), norm += lr[i] * lr[i];
    CHECK(std::sqrt(diff / norm) < 1e-4);
}

// A GGUF of tensors (name, rows) of `cols` columns and ggml type `type`, each `bytes` long (zeros).
inline void tiny_gguf(const fs::path& p, const std::vector<std::pair<std::string, uint64_t>>& tensors, uint32_t type, uint64_t cols,
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

}  // namespace convtest
