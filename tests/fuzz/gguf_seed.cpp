// Writes gguf_fuzz's seed corpus into a folder: small GGUF v3 files that both readers accept, so
// the fuzzer starts deep inside them. A llama with a byte-level BPE vocabulary (token types,
// merges, bos / eos, a chat template) and a tensor of every type the import reads; a qwen2 with a
// SentencePiece vocabulary (scores, byte tokens) and linear rope scaling; a llama with Llama
// 3.1's rope factors in rope_freqs.weight (factor 8, high_freq_factor 4, original context 8192).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

// A GGUF file built in memory: key/value pairs, then tensor infos and their data.
class Gguf {
public:
    void u32(const std::string& k, uint32_t v) { kv(k, 4), put(v); }
    void i32(const std::string& k, int32_t v) { kv(k, 5), put(v); }
    void f32(const std::string& k, float v) { kv(k, 6), put(v); }
    void boolean(const std::string& k, bool v) { kv(k, 7), put(static_cast<uint8_t>(v)); }
    void str(const std::string& k, const std::string& v) { kv(k, 8), text(v); }
    void strs(const std::string& k, const std::vector<std::string>& v) {
        kv(k, 9), put(uint32_t{8}), put(static_cast<uint64_t>(v.size()));
        for (const auto& s : v) text(s);
    }
    void i32s(const std::string& k, const std::vector<int32_t>& v) {
        kv(k, 9), put(uint32_t{5}), put(static_cast<uint64_t>(v.size()));
        for (int32_t x : v) put(x);
    }
    void f32s(const std::string& k, const std::vector<float>& v) {
        kv(k, 9), put(uint32_t{6}), put(static_cast<uint64_t>(v.size()));
        for (float x : v) put(x);
    }
    // A tensor of `rows` rows of `cols` values (ne = {cols, rows}), its bytes given.
    void tensor(const std::string& name, uint32_t type, int64_t cols, int64_t rows, std::vector<uint8_t> bytes) {
        tensors_.push_back({name, type, cols, rows, std::move(bytes)});
    }
    void write(const std::string& path) const {
        std::string out = "GGUF";
        auto app = [&](const auto& v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); };
        app(uint32_t{3});
        app(static_cast<uint64_t>(tensors_.size()));
        app(n_kv_);
        out += kv_;
        uint64_t offset = 0;
        std::vector<uint64_t> offsets;
        for (const auto& t : tensors_) {
            app(static_cast<uint64_t>(t.name.size()));
            out += t.name;
            app(t.rows > 1 ? uint32_t{2} : uint32_t{1});
            app(static_cast<uint64_t>(t.cols));
            if (t.rows > 1) app(static_cast<uint64_t>(t.rows));
            app(t.type);
            app(offset);
            offsets.push_back(offset);
            offset = (offset + t.bytes.size() + 31) / 32 * 32;
        }
        out.resize((out.size() + 31) / 32 * 32, '\0');
        const size_t data0 = out.size();
        for (size_t i = 0; i < tensors_.size(); ++i) {
            out.resize(data0 + offsets[i], '\0');
            out.append(reinterpret_cast<const char*>(tensors_[i].bytes.data()), tensors_[i].bytes.size());
        }
        std::ofstream(path, std::ios::binary).write(out.data(), static_cast<std::streamsize>(out.size()));
    }

private:
    struct Tensor {
        std::string name;
        uint32_t type;
        int64_t cols, rows;
        std::vector<uint8_t> bytes;
    };
    template <class T>
    void put(T v) {
        kv_.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    void text(const std::string& s) {
        put(static_cast<uint64_t>(s.size()));
        kv_ += s;
    }
    void kv(const std::string& key, uint32_t type) {
        ++n_kv_;
        text(key);
        put(type);
    }
    std::string kv_;
    uint64_t n_kv_ = 0;
    std::vector<Tensor> tensors_;
};

// Deterministic filler bytes: any bytes are valid block data (f16 scales included).
std::vector<uint8_t> bytes(size_t n, uint8_t seed) {
    std::vector<uint8_t> b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<uint8_t>(seed + i * 37 + (i >> 3));
    return b;
}

std::vector<uint8_t> floats(const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * 4);
    for (size_t i = 0; i < v.size(); ++i) std::memcpy(&b[i * 4], &v[i], 4);
    return b;
}

void model_keys(Gguf& g, const std::string& arch, uint32_t hidden, uint32_t heads, uint32_t kv_heads) {
    g.str("general.architecture", arch);
    g.u32("general.alignment", 32);
    g.u32(arch + ".embedding_length", hidden);
    g.u32(arch + ".feed_forward_length", 2 * hidden);
    g.u32(arch + ".block_count", 1);
    g.u32(arch + ".attention.head_count", heads);
    g.u32(arch + ".attention.head_count_kv", kv_heads);
    g.u32(arch + ".context_length", 256);
    g.f32(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
    g.f32(arch + ".rope.freq_base", 10000.0f);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) return 2;
    const std::string d = argv[1];
    {  // byte-level BPE, every tensor type the import reads
        Gguf g;
        model_keys(g, "llama", 32, 4, 2);
        g.str("tokenizer.ggml.model", "gpt2");
        g.str("tokenizer.ggml.pre", "llama-bpe");
        g.strs("tokenizer.ggml.tokens", {"a", "b", "ab", "\xc4\xa0", "\xc4\xa0" "ab", "<|begin|>", "<|end|>", "x"});
        g.i32s("tokenizer.ggml.token_type", {1, 1, 1, 1, 1, 3, 3, 4});
        g.strs("tokenizer.ggml.merges", {"a b", "\xc4\xa0 ab"});
        g.u32("tokenizer.ggml.bos_token_id", 5);
        g.u32("tokenizer.ggml.eos_token_id", 6);
        g.boolean("tokenizer.ggml.add_bos_token", true);
        g.str("tokenizer.chat_template", "{% for m in messages %}{{ m['content'] }}{% endfor %}");
        g.tensor("token_embd.weight", 0, 32, 8, bytes(32 * 8 * 4, 1));
        g.tensor("output_norm.weight", 1, 32, 1, bytes(64, 2));                // F16
        g.tensor("blk.0.attn_norm.weight", 30, 32, 1, bytes(64, 3));           // BF16
        g.tensor("blk.0.attn_q.weight", 8, 32, 2, bytes(2 * 34, 4));           // Q8_0
        g.tensor("blk.0.attn_k.weight", 2, 32, 2, bytes(2 * 18, 5));           // Q4_0
        g.tensor("blk.0.attn_v.weight", 3, 32, 1, bytes(20, 6));               // Q4_1
        g.tensor("blk.0.attn_output.weight", 6, 32, 1, bytes(22, 7));          // Q5_0
        g.tensor("blk.0.ffn_norm.weight", 7, 32, 1, bytes(24, 8));             // Q5_1
        g.tensor("blk.0.ffn_gate.weight", 12, 256, 1, bytes(144, 9));          // Q4_K
        g.tensor("blk.0.ffn_up.weight", 13, 256, 1, bytes(176, 10));           // Q5_K
        g.tensor("blk.0.ffn_down.weight", 14, 256, 1, bytes(210, 11));         // Q6_K
        g.tensor("output.weight", 16, 256, 1, bytes(66, 12));                  // IQ2_XXS: refused by name
        g.write(d + "/llama_bpe.gguf");
    }
    {  // SentencePiece vocabulary, linear rope scaling
        Gguf g;
        model_keys(g, "qwen2", 32, 4, 4);
        g.str("qwen2.rope.scaling.type", "linear");
        g.f32("qwen2.rope.scaling.factor", 2.0f);
        g.str("tokenizer.ggml.model", "llama");
        g.strs("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "<0x41>", "\xe2\x96\x81", "a", "b", "ab", "\xe2\x96\x81" "ab"});
        g.f32s("tokenizer.ggml.scores", {0, 0, 0, 0, -1, -2, -3, -1.5f, -0.5f});
        g.i32s("tokenizer.ggml.token_type", {2, 3, 3, 6, 1, 1, 1, 1, 1});
        g.u32("tokenizer.ggml.bos_token_id", 1);
        g.u32("tokenizer.ggml.eos_token_id", 2);
        g.tensor("token_embd.weight", 0, 32, 9, bytes(32 * 9 * 4, 13));
        g.tensor("blk.0.attn_q.bias", 0, 32, 1, bytes(32 * 4, 14));
        g.write(d + "/qwen2_spm.gguf");
    }
    {  // Llama 3.1's rope factors (head_dim 64: 32 frequencies, three between the plateaus), theta 500000
        Gguf g;
        model_keys(g, "llama", 256, 4, 4);
        g.f32("llama.rope.freq_base", 500000.0f);
        std::vector<float> fac;
        const double pi = 3.14159265358979323846, factor = 8, low = 1, high = 4, orig = 8192;
        for (int i = 0; i < 32; ++i) {
            const double wl = 2 * pi * std::pow(500000.0, 2.0 * i / 64.0);
            double f = 1;
            if (wl > orig / low)
                f = factor;
            else if (wl >= orig / high) {
                const double smooth = (orig / wl - low) / (high - low);
                f = 1.0 / ((1.0 - smooth) / factor + smooth);
            }
            fac.push_back(static_cast<float>(f));
        }
        g.tensor("rope_freqs.weight", 0, 32, 1, floats(fac));
        g.tensor("token_embd.weight", 0, 256, 2, bytes(256 * 2 * 4, 15));
        g.write(d + "/llama3_rope.gguf");
    }
    return 0;
}
