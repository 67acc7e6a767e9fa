#include "radiance/convert/gguf_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <vector>

#include "checked_json.h"
#include "radiance/convert/bpe_files.h"
#include "radiance/core/status_name.h"
#include "radiance/rad_decode.h"
#include "radiance/util/error.h"

namespace radiance::convert {
namespace {

// The file's key/value pairs as JSON values (integers, floats, bools, strings, arrays of them) and
// its tensor directory (name, dims with ne[0] first, ggml type). Written from the format's
// published layout (llama.cpp's docs/gguf.md); libquant's reader is the plugin's own (it reads
// only the keys the import needs, and the data).
struct GgufMeta {
    nlohmann::json kv = nlohmann::json::object();
    struct Tensor {
        std::string name;
        std::vector<int64_t> ne;
        uint32_t type;
        uint64_t offset;  // from data0
    };
    std::vector<Tensor> tensors;
    uint64_t data0 = 0;  // where the tensor data starts (general.alignment after the infos)
};

// f32 metadata (rope.freq_base, rms epsilon) as the shortest decimal that reads back as the same
// f32, so 1e-5 stored as an f32 is 1e-5 again, as a config.json states it.
double shortest_decimal(float f) {
    char buf[32];
    for (int p = 1; p <= 9; ++p) {
        std::snprintf(buf, sizeof buf, "%.*g", p, static_cast<double>(f));
        if (std::strtof(buf, nullptr) == f) break;
    }
    return std::strtod(buf, nullptr);
}

class MetaReader {
public:
    MetaReader(const std::string& path, std::string bytes) : path_(path), d_(std::move(bytes)) {}

    GgufMeta read() {
        GgufMeta m;
        if (d_.size() < 4 || d_.compare(0, 4, "GGUF") != 0) fail("not a GGUF file (no GGUF magic)");
        pos_ = 4;
        const uint32_t version = num<uint32_t>();
        if (version != 2 && version != 3) fail("GGUF version " + std::to_string(version) + " (2 or 3 read)");
        const uint64_t n_tensors = num<uint64_t>(), n_kv = num<uint64_t>();
        for (uint64_t i = 0; i < n_kv; ++i) {
            const std::string key = str();
            m.kv[key] = value(num<uint32_t>(), 0);
        }
        for (uint64_t i = 0; i < n_tensors; ++i) {
            GgufMeta::Tensor t;
            t.name = str();
            const uint32_t nd = num<uint32_t>();
            if (nd == 0 || nd > 4) fail("tensor '" + t.name + "' has " + std::to_string(nd) + " dimensions");
            for (uint32_t k = 0; k < nd; ++k) t.ne.push_back(static_cast<int64_t>(num<uint64_t>()));
            t.type = num<uint32_t>();
            t.offset = num<uint64_t>();
            m.tensors.push_back(std::move(t));
        }
        const auto align = m.kv.contains("general.alignment") && m.kv["general.alignment"].is_number_unsigned()
                               ? m.kv["general.alignment"].get<uint64_t>()
                               : uint64_t{32};
        if (align == 0 || (align & (align - 1)) || align > (uint64_t{1} << 20))
            fail("general.alignment " + std::to_string(align) + " is not a power of two of at most 1 MiB");
        m.data0 = (pos_ + align - 1) / align * align;
        return m;
    }

private:
    [[noreturn]] void fail(const std::string& why) const { throw Error(path_ + ": " + why); }
    template <class T>
    T num() {
        if (d_.size() - pos_ < sizeof(T)) fail("truncated metadata at byte " + std::to_string(pos_));
        T v;
        std::memcpy(&v, d_.data() + pos_, sizeof(T));
        pos_ += sizeof(T);
        return v;
    }
    std::string str() {
        const uint64_t n = num<uint64_t>();
        if (n > d_.size() - pos_) fail("a string runs past the end of the file at byte " + std::to_string(pos_));
        std::string s = d_.substr(pos_, n);
        pos_ += n;
        return s;
    }
    nlohmann::json value(uint32_t type, int depth) {
        switch (type) {
        case 0: return num<uint8_t>();
        case 1: return num<int8_t>();
        case 2: return num<uint16_t>();
        case 3: return num<int16_t>();
        case 4: return num<uint32_t>();
        case 5: return num<int32_t>();
        case 6: return shortest_decimal(num<float>());
        case 7: return num<uint8_t>() != 0;
        case 8: return str();
        case 9: {
            const uint32_t et = num<uint32_t>();
            const uint64_t n = num<uint64_t>();
            if (depth > 2 || n > d_.size()) fail("malformed array at byte " + std::to_string(pos_));
            nlohmann::json a = nlohmann::json::array();
            for (uint64_t i = 0; i < n; ++i) a.push_back(value(et, depth + 1));
            return a;
        }
        case 10: return num<uint64_t>();
        case 11: return num<int64_t>();
        case 12: return num<double>();
        default: fail("metadata value of unknown type " + std::to_string(type) + " at byte " + std::to_string(pos_));
        }
    }

    std::string path_, d_;
    uint64_t pos_ = 0;
};

// The metadata and directory only: the file is read up to where the tensor infos end (a few MB
// for a vocabulary), not its data.
GgufMeta read_meta(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error("cannot open " + path);
    f.seekg(0, std::ios::end);
    const auto size = static_cast<uint64_t>(std::max<std::streamoff>(0, f.tellg()));
    std::string bytes;
    for (uint64_t want = uint64_t{1} << 22;; want *= 4) {  // grow until the header fits
        f.clear();
        f.seekg(0);
        bytes.assign(std::min(want, size), '\0');  // no more than the file holds
        f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        bytes.resize(static_cast<size_t>(f.gcount()));
        try {
            return MetaReader(path, bytes).read();
        } catch (const Error&) {
            // the whole file was read, or a header past any vocabulary's size: it is malformed
            if (bytes.size() < want || want >= (uint64_t{1} << 28)) throw;
        }
    }
}

const nlohmann::json* key(const GgufMeta& m, const std::string& k) {
    auto it = m.kv.find(k);
    return it == m.kv.end() ? nullptr : &*it;
}

// transformers' name of a GGUF tensor of the llama family ("" for one it has none for).
std::string hf_name(const std::string& g) {
    static const std::map<std::string, std::string> top = {{"token_embd.weight", "model.embed_tokens.weight"},
                                                           {"output_norm.weight", "model.norm.weight"},
                                                           {"output.weight", "lm_head.weight"}};
    static const std::map<std::string, std::string> layer = {
        {"attn_norm.weight", "input_layernorm.weight"},    {"ffn_norm.weight", "post_attention_layernorm.weight"},
        {"attn_q.weight", "self_attn.q_proj.weight"},      {"attn_k.weight", "self_attn.k_proj.weight"},
        {"attn_v.weight", "self_attn.v_proj.weight"},      {"attn_output.weight", "self_attn.o_proj.weight"},
        {"attn_q.bias", "self_attn.q_proj.bias"},          {"attn_k.bias", "self_attn.k_proj.bias"},
        {"attn_v.bias", "self_attn.v_proj.bias"},          {"attn_q_norm.weight", "self_attn.q_norm.weight"},
        {"attn_k_norm.weight", "self_attn.k_norm.weight"}, {"ffn_gate.weight", "mlp.gate_proj.weight"},
        {"ffn_up.weight", "mlp.up_proj.weight"},           {"ffn_down.weight", "mlp.down_proj.weight"}};
    if (auto it = top.find(g); it != top.end()) return it->second;
    if (g.rfind("blk.", 0) != 0) return "";
    const size_t dot = g.find('.', 4);
    if (dot == std::string::npos) return "";
    auto it = layer.find(g.substr(dot + 1));
    return it == layer.end() ? "" : "model.layers." + g.substr(4, dot - 4) + "." + it->second;
}

// Llama 3's and Qwen2's pre-tokenizer splits (their tokenizer.json's Split regexes), by
// tokenizer.ggml.pre; others take GPT-2's ByteLevel regex.
nlohmann::json pre_tokenizer(const std::string& pre) {
    std::string regex;
    if (pre == "llama-bpe" || pre == "llama3")
        regex = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    else if (pre == "qwen2")
        regex = R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
    if (regex.empty()) return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}};
    return {{"type", "Sequence"},
            {"pretokenizers",
             {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
              {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", false}}}}};
}

// A byte-level BPE vocabulary (tokenizer.ggml.model "gpt2": tokens, merges, token types) as
// tokenizer.json: control tokens (type 3) and user-defined ones (4) as added tokens.
std::string tokenizer_json(const GgufMeta& m) {
    const nlohmann::json& tokens = *key(m, "tokenizer.ggml.tokens");
    const nlohmann::json* types = key(m, "tokenizer.ggml.token_type");
    const nlohmann::json* merges = key(m, "tokenizer.ggml.merges");
    nlohmann::json vocab = nlohmann::json::object(), added = nlohmann::json::array();
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string t = tokens[i].get<std::string>();
        vocab[t] = i;
        const int type = types && i < types->size() ? (*types)[i].get<int>() : 1;
        if (type == 3 || type == 4) added.push_back(added_token_json(static_cast<int64_t>(i), t, type == 4, type == 3));
    }
    const auto* pre = key(m, "tokenizer.ggml.pre");
    const bool llama3 = pre && (pre->get<std::string>() == "llama-bpe" || pre->get<std::string>() == "llama3");
    // Llama 3's tokenizer.json sets ignore_merges
    return byte_level_bpe_json(added, pre_tokenizer(pre ? pre->get<std::string>() : ""), vocab, merges ? *merges : nlohmann::json::array(),
                               llama3);
}

// rope_freqs.weight's values (F32, one a rotary frequency): the factors llama.cpp's converter
// writes for Llama 3.1-style rope scaling, each frequency divided by its factor.
std::vector<double> rope_factors(const std::string& path, const GgufMeta& m, const GgufMeta::Tensor& t) {
    const std::string what = path + ": rope_freqs.weight";
    if (t.type != 0 || t.ne.size() != 1 || t.ne[0] <= 0 || t.ne[0] > 4096) throw Error(what + " is not a 1-D F32 tensor of factors");
    std::ifstream f(path, std::ios::binary);
    std::vector<float> v(static_cast<size_t>(t.ne[0]));
    f.seekg(static_cast<std::streamoff>(m.data0 + t.offset));
    if (!f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4)))
        throw Error(what + " runs past the end of the file");
    std::vector<double> out(v.begin(), v.end());
    for (double x : out)
        if (!std::isfinite(x) || x <= 0) throw Error(what + " holds " + std::to_string(x) + ": every factor must be a positive number");
    double lo = out[0], hi = out[0];
    for (double x : out) lo = std::min(lo, x), hi = std::max(hi, x);
    if (std::fabs(lo - 1.0) > 1e-6 || !(hi > 1.0))
        throw Error(what + " is not Llama 3's shape of rope scaling (1 for the fastest frequencies, a factor for the slowest)");
    return out;
}

// Llama 3's factor for a frequency of wavelength `wl` (transformers' llama3 rope type).
double llama3_factor(double wl, double factor, double low, double high, double orig) {
    if (wl < orig / high) return 1.0;
    if (wl > orig / low) return factor;
    const double smooth = (orig / wl - low) / (high - low);
    return 1.0 / ((1.0 - smooth) / factor + smooth);
}

// The llama3 rope parameters that give `fac` over `dims` rotary dimensions at `theta`: factor
// the largest; low_freq_factor 1 (as every Llama 3.x release: the factors fix the other two
// only given one); high_freq_factor and the original context fitted to the frequencies between
// the plateaus, rounded (to 1/1000, to a whole length), then checked to give every factor back.
nlohmann::json llama3_rope(const std::string& path, const std::vector<double>& fac, double theta, int64_t dims) {
    const std::string what = path + ": rope_freqs.weight";
    if (static_cast<int64_t>(fac.size()) * 2 != dims)
        throw Error(what + " has " + std::to_string(fac.size()) + " factors for " + std::to_string(dims) + " rotary dimensions");
    const double pi = 3.14159265358979323846, factor = *std::max_element(fac.begin(), fac.end());
    std::vector<double> wl(fac.size());
    for (size_t i = 0; i < fac.size(); ++i) wl[i] = 2 * pi * std::pow(theta, 2.0 * static_cast<double>(i) / static_cast<double>(dims));
    // between the plateaus: smooth * (high - 1) - orig / wl = -1, least squares over those points
    double ss = 0, su = 0, uu = 0, s1 = 0, u1 = 0;
    int mid = 0;
    for (size_t i = 0; i < fac.size(); ++i) {
        if (fac[i] < 1 + 1e-6 || fac[i] > factor * (1 - 1e-6)) continue;
        const double sm = (1 / fac[i] - 1 / factor) / (1 - 1 / factor), u = 1 / wl[i];
        ss += sm * sm, su += sm * u, uu += u * u, s1 += sm, u1 += u, ++mid;
    }
    if (mid < 2) throw Error(what + " has fewer than two frequencies between its plateaus: the llama3 parameters are not determined");
    const double det = ss * uu - su * su, hd = (-s1 * uu + su * u1) / det, orig = (ss * u1 - su * s1) / det;
    const double high = std::round((1 + hd) * 1000) / 1000, orig_r = std::round(orig);
    if (!(high > 1 && high < 1e6 && orig_r >= 1 && orig_r <= 1e9))  // NaN fails too
        throw Error(what + ": its factors fit no llama3 rope scaling (high_freq_factor " + std::to_string(high) + ", original context " +
                    std::to_string(orig) + ")");
    for (size_t i = 0; i < fac.size(); ++i)
        if (!(std::fabs(llama3_factor(wl[i], factor, 1.0, high, orig_r) - fac[i]) <= 1e-5 * fac[i]))
            throw Error(what + ": no llama3 rope scaling (factor " + std::to_string(factor) + ", low_freq_factor 1) gives its factors");
    return {{"rope_type", "llama3"},  {"rope_theta", theta},      {"factor", shortest_decimal(static_cast<float>(factor))},
            {"low_freq_factor", 1.0}, {"high_freq_factor", high}, {"original_max_position_embeddings", static_cast<int64_t>(orig_r)}};
}

// A SentencePiece vocabulary (tokenizer.ggml.model "llama": tokens, scores, token types, byte
// tokens <0xNN>) as a Llama tokenizer.json: BPE with byte fallback, "▁" for a space and one before
// the text, and as merges every split of a normal token into two tokens, the merged token's score
// deciding their order (higher first; a token's splits by their parts' ids), as transformers'
// converter extracts them from a SentencePiece model.
std::string spm_tokenizer_json(const GgufMeta& m) {
    const nlohmann::json& tokens = *key(m, "tokenizer.ggml.tokens");
    const nlohmann::json* types = key(m, "tokenizer.ggml.token_type");
    const nlohmann::json* scores = key(m, "tokenizer.ggml.scores");
    std::map<std::string, int64_t> ids;
    for (size_t i = 0; i < tokens.size(); ++i) ids.emplace(tokens[i].get<std::string>(), static_cast<int64_t>(i));
    auto type_of = [&](size_t i) { return types && i < types->size() ? (*types)[i].get<int>() : 1; };
    auto score_of = [&](size_t i) { return scores && i < scores->size() ? (*scores)[i].get<double>() : -static_cast<double>(i); };
    struct Merge {
        double score;
        int64_t l, r;
        std::string text;
    };
    std::vector<Merge> merges;
    nlohmann::json vocab = nlohmann::json::object(), added = nlohmann::json::array();
    std::string unk;
    for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string t = tokens[i].get<std::string>();
        vocab[t] = i;
        const int type = type_of(i);
        if (type == 2) unk = t;
        if (type == 2 || type == 3 || type == 4) added.push_back(added_token_json(static_cast<int64_t>(i), t, type == 4, type != 4));
        if (type != 1) continue;
        std::vector<Merge> local;
        for (size_t k = 1; k < t.size(); ++k) {
            if ((static_cast<unsigned char>(t[k]) & 0xC0) == 0x80) continue;  // inside a character
            auto l = ids.find(t.substr(0, k)), r = ids.find(t.substr(k));
            if (l != ids.end() && r != ids.end()) local.push_back({score_of(i), l->second, r->second, l->first + " " + r->first});
        }
        std::sort(local.begin(), local.end(), [](const Merge& a, const Merge& b) { return a.l != b.l ? a.l < b.l : a.r < b.r; });
        merges.insert(merges.end(), local.begin(), local.end());
    }
    std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) { return a.score > b.score; });
    nlohmann::json merge_list = nlohmann::json::array();
    for (const Merge& mg : merges) merge_list.push_back(mg.text);
    const std::string space = "\xe2\x96\x81";  // U+2581, SentencePiece's space
    nlohmann::json tok = {
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer",
         {{"type", "Sequence"},
          {"normalizers",
           {{{"type", "Prepend"}, {"prepend", space}}, {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", space}}}}}},
        {"pre_tokenizer", nullptr},
        {"post_processor", nullptr},
        {"decoder",
         {{"type", "Sequence"},
          {"decoders",
           {{{"type", "Replace"}, {"pattern", {{"String", space}}}, {"content", " "}},
            {{"type", "ByteFallback"}},
            {{"type", "Fuse"}},
            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}}}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", unk.empty() ? nlohmann::json(nullptr) : nlohmann::json(unk)},
          {"continuing_subword_prefix", ""},
          {"end_of_word_suffix", ""},
          {"fuse_unk", true},
          {"byte_fallback", true},
          {"ignore_merges", false},
          {"vocab", vocab},
          {"merges", merge_list}}}};
    return tok.dump();
}

}  // namespace

bool is_gguf_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    char magic[4] = {};
    return f && f.read(magic, 4) && std::memcmp(magic, "GGUF", 4) == 0;
}

namespace {

// The vocabulary's arrays hold what the tokenizer writers read: tokens and merges strings,
// token types integers, scores numbers.
void check_vocabulary_types(const std::string& path, const GgufMeta& m) {
    auto check = [&](const char* k, bool (nlohmann::json::*is)() const noexcept, const char* what) {
        const nlohmann::json* v = key(m, k);
        if (v && (!v->is_array() || !std::all_of(v->begin(), v->end(), [&](const nlohmann::json& e) { return (e.*is)(); })))
            throw Error(path + ": " + k + " is not an array of " + what);
    };
    check("tokenizer.ggml.tokens", &nlohmann::json::is_string, "strings");
    check("tokenizer.ggml.merges", &nlohmann::json::is_string, "strings");
    check("tokenizer.ggml.token_type", &nlohmann::json::is_number_integer, "integers");
    check("tokenizer.ggml.scores", &nlohmann::json::is_number, "numbers");
    if (const nlohmann::json* pre = key(m, "tokenizer.ggml.pre"); pre && !pre->is_string())
        throw Error(path + ": tokenizer.ggml.pre is not a string");
}

GgufSource read_source(const std::string& path);

}  // namespace

// Every value the metadata gives is checked for its kind and range where it is read, naming the
// key; nlohmann's own exceptions (a vocabulary string that is not UTF-8, found as the
// tokenizer.json is written) become the same kind of error, naming the file.
GgufSource read_gguf_source(const std::string& path) {
    try {
        return read_source(path);
    } catch (const nlohmann::json::exception& e) {
        throw Error(path + ": malformed metadata (" + e.what() + ")");
    }
}

namespace {

GgufSource read_source(const std::string& path) {
    const GgufMeta m = read_meta(path);
    const nlohmann::json* a = key(m, "general.architecture");
    const std::string arch = a && a->is_string() ? a->get<std::string>() : "";
    static const std::map<std::string, std::string> hf_arch = {
        {"llama", "LlamaForCausalLM"}, {"qwen2", "Qwen2ForCausalLM"}, {"qwen3", "Qwen3ForCausalLM"}};
    if (!hf_arch.count(arch))
        throw Error(path + ": general.architecture is '" + arch +
                    "'; a GGUF SRC is read for llama, qwen2 and qwen3 (convert another from its folder)");
    auto opt = [&](const std::string& k) { return key(m, arch + "." + k); };
    // ARCH.k, a whole number in [1, 2^31) or a finite positive number (`fallback` where absent, if given).
    auto count = [&](const std::string& k, int64_t fallback = 0) -> int64_t {
        const nlohmann::json* v = opt(k);
        if (!v && fallback == 0) throw Error(path + ": no " + arch + "." + k + " (a number) in the metadata");
        return v ? checked_count(*v, path + ": " + arch + "." + k, 1) : fallback;
    };
    auto real = [&](const std::string& k, double fallback = 0) -> double {
        const nlohmann::json* v = opt(k);
        if (!v && fallback == 0) throw Error(path + ": no " + arch + "." + k + " (a number) in the metadata");
        return v ? checked_real(*v, path + ": " + arch + "." + k, true) : fallback;
    };
    bool has_output = false;
    int64_t embd_rows = 0;
    std::vector<double> rope_freqs;  // Llama 3.1-style scaling, as per-frequency factors
    for (const auto& t : m.tensors) {
        has_output = has_output || t.name == "output.weight";
        if (t.name == "rope_freqs.weight") rope_freqs = rope_factors(path, m, t);
        if (t.name == "token_embd.weight" && t.ne.size() == 2) embd_rows = t.ne[1];
    }
    GgufSource s;
    nlohmann::json& c = s.config;
    const int64_t hidden = count("embedding_length"), heads = count("attention.head_count");
    c["architectures"] = {hf_arch.at(arch)};
    c["model_type"] = arch;
    c["hidden_size"] = hidden;
    c["intermediate_size"] = count("feed_forward_length");
    c["num_hidden_layers"] = count("block_count");
    c["num_attention_heads"] = heads;
    c["num_key_value_heads"] = count("attention.head_count_kv", heads);
    c["head_dim"] = count("attention.key_length", std::max<int64_t>(1, hidden / heads));
    c["max_position_embeddings"] = count("context_length");
    c["rms_norm_eps"] = real("attention.layer_norm_rms_epsilon");
    c["rope_theta"] = real("rope.freq_base", 10000.0);
    // the config's rope parameters, which the llama family reads: a GGUF holds Llama 3.1's
    // scaling as the factors themselves (rope_freqs.weight), from which they are recovered
    // (ARCH.rope.scaling.type: linear maps to the config's; another is refused rather than served
    // unscaled)
    const auto* scaling = opt("rope.scaling.type");
    const std::string scaling_type = scaling && scaling->is_string() ? scaling->get<std::string>() : "none";
    if (scaling_type != "none" && scaling_type != "linear")
        throw Error(path + ": " + arch + ".rope.scaling.type is '" + scaling_type + "'; a GGUF SRC maps linear rope scaling only");
    if (scaling_type == "linear") {
        if (!opt("rope.scaling.factor")) throw Error(path + ": linear rope scaling without " + arch + ".rope.scaling.factor");
        c["rope_parameters"] = {{"rope_type", "linear"}, {"rope_theta", c["rope_theta"]}, {"factor", real("rope.scaling.factor")}};
    } else if (rope_freqs.empty()) {
        c["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", c["rope_theta"]}};
    } else {
        c["rope_parameters"] =
            llama3_rope(path, rope_freqs, c["rope_theta"].get<double>(), count("rope.dimension_count", c["head_dim"].get<int64_t>()));
        s.note = "Llama 3.1-style rope scaling recovered from rope_freqs.weight: " + c["rope_parameters"].dump();
    }
    check_vocabulary_types(path, m);
    const nlohmann::json* tokens = key(m, "tokenizer.ggml.tokens");
    const int64_t n_vocab = opt("vocab_size")  ? count("vocab_size")
                            : embd_rows        ? embd_rows
                            : tokens           ? static_cast<int64_t>(tokens->size())
                                               : 0;
    if (n_vocab <= 0 || n_vocab >= (int64_t{1} << 31))
        throw Error(path + ": no vocabulary size of 1 to 2^31 (" + arch + ".vocab_size, token_embd.weight or tokenizer.ggml.tokens)");
    c["vocab_size"] = n_vocab;
    c["tie_word_embeddings"] = !has_output;
    c["torch_dtype"] = "float32";
    if (arch != "llama") c["attention_bias"] = arch == "qwen2";
    nlohmann::json tc = nlohmann::json::object();
    for (const char* which : {"bos", "eos"}) {
        const nlohmann::json* id = key(m, std::string("tokenizer.ggml.") + which + "_token_id");
        if (!id || !id->is_number_integer()) continue;
        c[std::string(which) + "_token_id"] = *id;
        if (tokens && id->get<size_t>() < tokens->size()) tc[std::string(which) + "_token"] = (*tokens)[id->get<size_t>()];
    }
    if (const auto* ab = key(m, "tokenizer.ggml.add_bos_token"); ab && ab->is_boolean()) tc["add_bos_token"] = *ab;
    if (const auto* ct = key(m, "tokenizer.chat_template"); ct && ct->is_string()) {
        s.chat_template = ct->get<std::string>();
        tc["chat_template"] = s.chat_template;
    }
    s.tokenizer_config = tc.dump();
    const nlohmann::json* model = key(m, "tokenizer.ggml.model");
    const std::string tok_model = model && model->is_string() ? model->get<std::string>() : "";
    if (tokens && tokens->is_array() && tok_model == "gpt2")
        s.tokenizer_json = tokenizer_json(m);
    else if (tokens && tokens->is_array() && tok_model == "llama")
        s.tokenizer_json = spm_tokenizer_json(m);
    else if (!tokens)
        s.note = "the file has no vocabulary (tokenizer.ggml.tokens); the container carries no tokenizer";
    else
        s.note = "the vocabulary (tokenizer.ggml.model '" + tok_model +
                 "') is neither a byte-level BPE (gpt2) nor a SentencePiece one (llama), the kinds written as a tokenizer.json; the "
                 "container carries no tokenizer";
    return s;
}

}  // namespace

std::string gguf_recipe(const std::string& path, const nlohmann::json& config) {
    std::string r = "token_embd.weight cast dtype=f32\n";
    if (config.value("attention_bias", false)) r += "blk.*.attn_qkv.bias cast dtype=f32\n";  // fused 1-D parts: not imported
    return r + "* ggml file=" + path + "\n";
}

namespace {

// One GGUF tensor decoded: its planes as the ggml quantiser imports them, through the core's
// decoder, as f32.
std::vector<uint8_t> decode_tensor(const RadQuantizerInfo* q, const std::string& path, const std::string& gname, int64_t rows,
                                   int64_t cols) {
    const char* keys[] = {"file"};
    const char* vals[] = {path.c_str()};
    RadEncoding enc;
    if (int rc = q->encoding(gname.c_str(), rows, cols, keys, vals, 1, &enc); rc != RAD_OK)
        throw Error(path + ": tensor '" + gname + "' cannot be read (" + core::status_name(rc) +
                    "; the ggml quantiser said why on stderr)");
    std::vector<std::vector<uint8_t>> planes(static_cast<size_t>(enc.n_planes));
    std::vector<void*> at;
    std::vector<const void*> cat;
    for (int k = 0; k < enc.n_planes; ++k) {
        int64_t pr = 0, pc = 0;
        rad_plane_extent(&enc.planes[k], rows, cols, &pr, &pc);
        planes[static_cast<size_t>(k)].resize(static_cast<size_t>(pr) * rad_row_bytes(enc.planes[k].dtype, static_cast<uint64_t>(pc)));
        at.push_back(planes[static_cast<size_t>(k)].data());
        cat.push_back(planes[static_cast<size_t>(k)].data());
    }
    RadQuantInput in{};
    in.name = gname.c_str();
    in.rows = rows;
    in.cols = cols;
    in.r0 = 0;
    in.n_rows = rows;
    in.opt_keys = keys;
    in.opt_vals = vals;
    in.n_opts = 1;
    std::vector<uint8_t> f32(static_cast<size_t>(rows * cols) * 4);
    if (int rc = q->quantize(&enc, &in, at.data()); rc != RAD_OK)
        throw Error(path + ": tensor '" + gname + "' could not be imported (" + core::status_name(rc) + ")");
    if (int rc = rad_decode_rows(&enc, rows, cols, 0, rows, cat.data(), reinterpret_cast<float*>(f32.data())); rc != RAD_OK)
        throw Error(path + ": tensor '" + gname + "' does not decode (" + core::status_name(rc) + ")");
    return f32;
}

}  // namespace

Checkpoint gguf_checkpoint(const core::Registry& reg, const std::string& path) {
    const GgufMeta m = read_meta(path);
    const RadQuantizerInfo* q = reg.quantizer("ggml");
    if (!q) throw Error(path + ": reading a GGUF needs libquant's ggml quantiser, which is not loaded");
    Checkpoint ck;
    for (const auto& t : m.tensors) {
        const std::string name = hf_name(t.name);
        if (name.empty()) continue;  // not the llama family's (the converter names what it misses)
        int64_t rows = 1;
        for (size_t k = 1; k < t.ne.size(); ++k) rows *= t.ne[k];
        const int64_t cols = t.ne[0];
        StTensor st;
        st.name = name;
        st.file = path;
        st.dtype = RAD_F32;
        st.bytes = static_cast<uint64_t>(rows * cols) * 4;
        for (size_t k = t.ne.size(); k-- > 0;) st.shape.push_back(t.ne[k]);
        ck.add_lazy(std::move(st), [q, path, gname = t.name, rows, cols] { return decode_tensor(q, path, gname, rows, cols); });
    }
    return ck;
}

}  // namespace radiance::convert
