// A GGUF file as rad-convert's only SRC (gguf_source.h): the wide llama fixture with a small
// byte-level BPE tokenizer and a chat template, exported by tools/gguf/export_gguf.py at q4_k_m,
// converted from the .gguf alone (no recipe: the default `* ggml file=SRC`). Its logits on libref
// equal bit for bit those of the same file imported beside the Hugging Face folder (`* ggml`, the
// folder's config.json), and its model.*, rope.* and arch.* metadata are the folder's; its
// tokenizer encodes as the folder's tokenizer.json does; its chat template is the folder's.
//
// Mutations each of these caught (made in gguf_source.cpp, watched fail, undone): the head count
// taken for head_count_kv fails the conversion (k and v of another shape); rms_norm_eps read
// without the f32-to-shortest-decimal step (1e-5 as 9.99999974738e-06) fails the metadata (the
// logits agree: the kernels take eps as an f32); the merges left out fails the encoding; the
// SentencePiece merges in the order of their left part's id, or of the merged token's score
// ascending, fails the SentencePiece encoding ("abc cab"), and so does its byte fallback off ("café"); the rope_freqs shape check skipped fails "refused naming it" (the message then names a missing
// key); high_freq_factor not rounded fails the llama3 metadata (4.0000x against the folder's 4).
#include <catch2/catch.hpp>

#include <cstring>

#include "gguf_import_util.h"
#include "radiance/text/tokenizer.h"

using namespace radiance;
using convtest::Fixture;
using convtest::import_and_reference;
using convtest::logits;
using convtest::run;
using convtest::wide_llama;
namespace fs = std::filesystem;

namespace {

// GPT-2's byte-to-character map (printable Latin-1 bytes as themselves, the rest from U+0100 on),
// as UTF-8: the alphabet of a byte-level BPE vocabulary.
std::string byte_char(int b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    int cp = b;
    if (!printable) {
        int n = 0;
        for (int c = 0; c < b; ++c) n += !((c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || (c >= 0xAE && c <= 0xFF));
        cp = 256 + n;
    }
    std::string s;
    if (cp < 0x80) {
        s += static_cast<char>(cp);
    } else {
        s += static_cast<char>(0xC0 | (cp >> 6));
        s += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return s;
}

// A byte-level BPE of the 256 bytes, three merges and two special tokens, as tokenizer.json.
std::string small_tokenizer() {
    nlohmann::json vocab = nlohmann::json::object();
    for (int b = 0; b < 256; ++b) vocab[byte_char(b)] = b;
    const std::string sp = byte_char(' ');
    vocab[sp + "t"] = 256;
    vocab["he"] = 257;
    vocab[sp + "the"] = 258;
    nlohmann::json added = nlohmann::json::array();
    int id = 259;
    for (const char* t : {"<s>", "</s>"})
        added.push_back({{"id", id++},
                         {"content", t},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
    const nlohmann::json byte_level = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    nlohmann::json tok = {{"version", "1.0"},
                          {"truncation", nullptr},
                          {"padding", nullptr},
                          {"added_tokens", added},
                          {"normalizer", nullptr},
                          {"pre_tokenizer", byte_level},
                          {"post_processor", nullptr},
                          {"decoder", byte_level},
                          {"model",
                           {{"type", "BPE"},
                            {"dropout", nullptr},
                            {"unk_token", nullptr},
                            {"continuing_subword_prefix", ""},
                            {"end_of_word_suffix", ""},
                            {"fuse_unk", false},
                            {"byte_fallback", false},
                            {"vocab", vocab},
                            {"merges", {sp + " t", "h e", sp + "t he"}}}}};
    return tok.dump();
}

// `family`'s wide fixture exported at q4_k_m and converted twice: beside its folder and alone.
void alone_as_beside(const std::string& family, bool llama3_rope = false) {
    Fixture f;
    wide_llama(f, family);
    if (llama3_rope)  // written into the GGUF as llama.cpp does: rope_freqs.weight, the factors
        f.config["rope_parameters"] = {{"rope_type", "llama3"},  {"rope_theta", 10000.0},   {"factor", 8.0},
                                       {"low_freq_factor", 1.0}, {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 128}};
    const std::string tok = small_tokenizer(), templ = "{% for m in messages %}{{ m['content'] }}{% endfor %}";
    // import_and_reference writes the folder, exports it (tokenizer.json and the template with it)
    // and imports it beside the folder into out.rad
    std::ofstream(f.dir / "tokenizer.json") << tok;
    std::ofstream(f.dir / "tokenizer_config.json") << nlohmann::json{{"chat_template", templ}}.dump();
    const std::string beside = import_and_reference(f, "q4_k_m", "w4a16", family == "qwen2" ? "blk.*.attn_qkv.bias cast dtype=f32\n" : "");

    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    const core::Registry reg = core::Registry::load(lo);
    convert::ConvertOptions o;
    o.src = (f.dir / "m.gguf").string();
    o.out = (f.dir / "alone.rad").string();
    std::ostringstream log;
    convert::convert(reg, o, log);
    INFO(log.str());
    auto c = container::Reader::open(o.out);
    CHECK(c->meta().at("arch.quant").s == "w4a16");
    // the engine's keys as the folder's config.json gave them (the name is the file's stem there)
    auto folder = container::Reader::open(beside);
    for (const auto& [k, v] : folder->meta()) {
        if (k == "model.name" || !(k.rfind("model.", 0) == 0 || k.rfind("rope.", 0) == 0 || k.rfind("arch.", 0) == 0)) continue;
        INFO(k);
        REQUIRE(c->meta().count(k));
        CHECK(c->meta().at(k).to_string() == v.to_string());
    }

    const auto la = logits(o.out, {"libref"}), lb = logits(beside, {"libref"});
    REQUIRE(la.size() == lb.size());
    CHECK(std::memcmp(la.data(), lb.data(), la.size() * 4) == 0);

    auto tj = c->blob(container::Section::Tokenizer);
    REQUIRE(tj);
    auto tc = c->blob(container::Section::TokenizerConfig);
    const text::Tokenizer from_gguf = text::Tokenizer::from_json(*tj, tc ? *tc : std::string());
    const text::Tokenizer from_folder = text::Tokenizer::from_json(tok);
    for (const std::string s : {"the then thee", " the</s> x", "hello\nworld  the"}) {
        INFO(s);
        CHECK(from_gguf.encode(s, false) == from_folder.encode(s, false));
    }
    auto ct = c->blob(container::Section::ChatTemplate);
    REQUIRE(ct);
    CHECK(*ct == templ);
}

// A Llama-style (SentencePiece) tokenizer.json: <unk>, <s>, </s>, the 256 byte tokens, a few
// pieces and the merges of their splits, in the pieces' order (as transformers extracts them);
// "ab" before "bc", whose left parts' ids are the other way round ("b" before "a").
std::string sentencepiece_tokenizer() {
    const std::string sp = "\xe2\x96\x81";
    nlohmann::json vocab = nlohmann::json::object();
    vocab["<unk>"] = 0;
    vocab["<s>"] = 1;
    vocab["</s>"] = 2;
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        vocab[name] = 3 + b;
    }
    int id = 259;
    for (const std::string& piece :
         {sp, std::string("t"), std::string("h"), std::string("e"), std::string("n"), sp + "t", std::string("he"), sp + "the", sp + "then",
          std::string("b"), std::string("a"), std::string("c"), std::string("ab"), std::string("bc")})
        vocab[piece] = id++;
    nlohmann::json added = nlohmann::json::array();
    for (int i = 0; i < 3; ++i)
        added.push_back({{"id", i},
                         {"content", i == 0   ? "<unk>"
                                     : i == 1 ? "<s>"
                                              : "</s>"},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
    nlohmann::json tok = {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer",
         {{"type", "Sequence"},
          {"normalizers",
           {{{"type", "Prepend"}, {"prepend", sp}}, {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", sp}}}}}},
        {"pre_tokenizer", nullptr},
        {"post_processor", nullptr},
        {"decoder",
         {{"type", "Sequence"},
          {"decoders",
           {{{"type", "Replace"}, {"pattern", {{"String", sp}}}, {"content", " "}},
            {{"type", "ByteFallback"}},
            {{"type", "Fuse"}},
            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", "<unk>"},
          {"continuing_subword_prefix", ""},
          {"end_of_word_suffix", ""},
          {"fuse_unk", true},
          {"byte_fallback", true},
          {"vocab", vocab},
          {"merges", {sp + " t", "h e", sp + "t he", sp + "the n", "a b", "b c"}}}}};
    return tok.dump();
}

}  // namespace

// llama.cpp writes a Llama-style vocabulary as SentencePiece's (tokens, scores, types, no merges):
// the tokenizer.json rebuilt from it (merges from every split, byte fallback) encodes as the
// folder's and decodes as it does.
TEST_CASE("a GGUF's SentencePiece vocabulary becomes a tokenizer that encodes as the folder's", "[gguf][gguf_src]") {
    Fixture f;
    const std::string tok = sentencepiece_tokenizer();
    f.convert_it();
    std::ofstream(f.dir / "tokenizer.json") << tok;
    const std::string gguf = (f.dir / "m.gguf").string();
    REQUIRE(run("python3 " EXPORT_GGUF " " + f.dir.string() + " " + gguf + " --type q8_0") == 0);
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    const core::Registry reg = core::Registry::load(lo);
    convert::ConvertOptions o;
    o.src = gguf;
    o.out = (f.dir / "alone.rad").string();
    std::ostringstream log;
    convert::convert(reg, o, log);
    auto c = container::Reader::open(o.out);
    auto tj = c->blob(container::Section::Tokenizer);
    REQUIRE(tj);
    auto tc = c->blob(container::Section::TokenizerConfig);
    const text::Tokenizer from_gguf = text::Tokenizer::from_json(*tj, tc ? *tc : std::string());
    const text::Tokenizer from_folder = text::Tokenizer::from_json(tok);
    for (const std::string s : {"the then thee", "then the  x", "caf\xc3\xa9 </s> the", "abc cab"}) {
        INFO(s);
        const auto ids = from_gguf.encode(s, false);
        CHECK(ids == from_folder.encode(s, false));
        CHECK(from_gguf.decode(ids) == from_folder.decode(ids));
    }
}

TEST_CASE("a llama GGUF file alone converts: config, tokenizer, chat template and weights as the folder's", "[gguf][gguf_src]") {
    alone_as_beside("llama");
}

// Llama 3.1's rope scaling: the parameters recovered from the factors are the folder's (the
// metadata comparison), and so are the logits.
TEST_CASE("a llama GGUF with rope_freqs.weight converts alone, its llama3 rope parameters recovered", "[gguf][gguf_src]") {
    alone_as_beside("llama", true);
}

TEST_CASE("a qwen2 GGUF file alone converts (its fused q/k/v bias cast by the default recipe)", "[gguf][gguf_src]") {
    alone_as_beside("qwen2");
}

TEST_CASE("a qwen3 GGUF file alone converts (its per-head q/k norms, head_dim from key_length)", "[gguf][gguf_src]") {
    alone_as_beside("qwen3");
}

namespace {

// A GGUF whose metadata is general.architecture = `arch`, the string keys `strs` and the u32 keys
// `nums`, and whose tensors are `tensors` (F32, 32 values each, zeros).
void arch_gguf(const fs::path& p, const std::string& arch, const std::vector<std::string>& tensors,
               const std::vector<std::pair<std::string, std::string>>& strs = {},
               const std::vector<std::pair<std::string, uint32_t>>& nums = {}) {
    std::string h = "GGUF";
    auto u32 = [&](uint32_t v) { h.append(reinterpret_cast<const char*>(&v), 4); };
    auto u64 = [&](uint64_t v) { h.append(reinterpret_cast<const char*>(&v), 8); };
    auto str = [&](const std::string& v) { u64(v.size()), h += v; };
    u32(3);
    u64(tensors.size());
    u64(1 + strs.size() + nums.size());
    str("general.architecture");
    u32(8);
    str(arch);
    for (auto& [k, v] : strs) str(k), u32(8), str(v);
    for (auto& [k, v] : nums) str(k), u32(4), u32(v);
    for (size_t i = 0; i < tensors.size(); ++i) {
        str(tensors[i]);
        u32(1);
        u64(32);
        u32(0);
        u64(128 * i);
    }
    h.resize((h.size() + 31) / 32 * 32 + 128 * tensors.size(), '\0');
    std::ofstream(p, std::ios::binary) << h;
}

// The message converting `src` alone throws ("" if none).
std::string convert_alone(const fs::path& src, const fs::path& out) {
    core::LoadOptions lo;
    lo.homes = {RAD_BUILD_HOME_DIR};
    const core::Registry reg = core::Registry::load(lo);
    convert::ConvertOptions o;
    o.src = src.string();
    o.out = out.string();
    std::ostringstream log;
    try {
        convert::convert(reg, o, log);
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

}  // namespace

TEST_CASE("a GGUF SRC of an architecture not read, rope_freqs not of Llama 3's shape or a rope scaling not mapped is refused, naming it",
          "[gguf][gguf_src]") {
    Fixture f;
    const fs::path bad = f.dir / "x.gguf";
    SECTION("gpt2") {
        arch_gguf(bad, "gpt2", {});
        const std::string what = convert_alone(bad, f.dir / "out.rad");
        CHECK(what.find("gpt2") != std::string::npos);
        CHECK(what.find(bad.string()) != std::string::npos);
    }
    SECTION("rope_freqs") {
        arch_gguf(bad, "llama", {"token_embd.weight", "rope_freqs.weight"});
        const std::string what = convert_alone(bad, f.dir / "out.rad");
        CHECK(what.find("rope_freqs.weight") != std::string::npos);
        CHECK(what.find(bad.string()) != std::string::npos);
    }
    SECTION("yarn") {  // every key the configuration needs, and a rope scaling not mapped
        std::vector<std::pair<std::string, uint32_t>> nums;
        for (const char* k : {"embedding_length", "attention.head_count", "feed_forward_length", "block_count", "context_length",
                              "attention.layer_norm_rms_epsilon"})
            nums.emplace_back(std::string("llama.") + k, 64);
        arch_gguf(bad, "llama", {"token_embd.weight"}, {{"llama.rope.scaling.type", "yarn"}}, nums);
        const std::string what = convert_alone(bad, f.dir / "out.rad");
        CHECK(what.find("llama.rope.scaling.type") != std::string::npos);
        CHECK(what.find("yarn") != std::string::npos);
    }
    CHECK(!f.any_output());
}

// Metadata of the wrong kind or out of range is refused naming the key, never a crash or a
// library's own exception (tests/fuzz/gguf_fuzz found both: a NaN through the llama3 fit into an
// integer, a vocabulary array read as strings when it held numbers). Mutations seen failing: the
// vocabulary's kinds not checked (the message came from nlohmann, naming no key); `count` taking
// any number ("-3" became a config value).
TEST_CASE("GGUF metadata of the wrong kind or out of range is refused, naming the key", "[gguf][gguf_src]") {
    Fixture f;
    const fs::path bad = f.dir / "x.gguf";
    std::vector<std::pair<std::string, uint32_t>> nums;
    for (const char* k : {"embedding_length", "attention.head_count", "feed_forward_length", "block_count", "context_length",
                          "attention.layer_norm_rms_epsilon"})
        nums.emplace_back(std::string("llama.") + k, 64);
    auto refused = [&](const std::string& key, const std::string& why) {
        const std::string what = convert_alone(bad, f.dir / "out.rad");
        INFO(what);
        CHECK(what.find(bad.string()) != std::string::npos);
        CHECK(what.find(key) != std::string::npos);
        CHECK(what.find(why) != std::string::npos);
    };
    SECTION("a count given as a string") {
        arch_gguf(bad, "llama", {"token_embd.weight"}, {{"llama.block_count", "64"}}, {nums[0], nums[1], nums[2], nums[4], nums[5]});
        refused("llama.block_count", "not an integer");
    }
    SECTION("a count of zero") {
        nums[3].second = 0;
        arch_gguf(bad, "llama", {"token_embd.weight"}, {}, nums);
        refused("llama.block_count", "is 0, not an integer from 1");
    }
    SECTION("a vocabulary that is not an array of strings") {
        nums.emplace_back("tokenizer.ggml.tokens", 7);
        nums.emplace_back("tokenizer.ggml.bos_token_id", 0);
        arch_gguf(bad, "llama", {"token_embd.weight"}, {{"tokenizer.ggml.model", "gpt2"}}, nums);
        refused("tokenizer.ggml.tokens", "not an array of strings");
    }
    CHECK(!f.any_output());
}
