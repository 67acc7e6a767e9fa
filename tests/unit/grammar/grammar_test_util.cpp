#include "grammar_test_util.h"

#include <map>
#include <mutex>

namespace gtest {

std::shared_ptr<const Vocabulary> byte_vocab() {
    static const auto v = [] {
        std::vector<std::string> bytes(256);
        std::vector<uint8_t> usable(256, 1);
        for (int b = 0; b < 256; ++b) bytes[b] = std::string(1, static_cast<char>(b));
        return Vocabulary::build(bytes, usable, 256);
    }();
    return v;
}

std::shared_ptr<const CompiledGrammar> compile_bytes(const Grammar& g) { return CompiledGrammar::compile(g, byte_vocab()); }

bool matches(const std::shared_ptr<const CompiledGrammar>& c, std::string_view text) {
    Matcher m(c);
    return m.accept_bytes(text) && m.can_end();
}

const radiance::text::Tokenizer& tokenizer(const std::string& name) {
    static std::mutex mu;
    static std::map<std::string, std::unique_ptr<radiance::text::Tokenizer>> cache;
    std::lock_guard lk(mu);
    auto& t = cache[name];
    if (!t) {
        const std::string dir = std::string(RAD_SHARED_DIR) + "/tokenizers/" + name;
        t = std::make_unique<radiance::text::Tokenizer>(
            radiance::text::Tokenizer::from_file(dir + "/tokenizer.json", dir + "/tokenizer_config.json"));
    }
    return *t;
}

std::shared_ptr<const Vocabulary> vocab(const std::string& name) {
    static std::mutex mu;
    static std::map<std::string, std::shared_ptr<const Vocabulary>> cache;
    const auto& t = tokenizer(name);
    std::lock_guard lk(mu);
    auto& v = cache[name];
    if (!v) v = Vocabulary::from_tokenizer(t, static_cast<int64_t>(t.vocab_size()));
    return v;
}

Drawn draw(const std::shared_ptr<const CompiledGrammar>& c, std::mt19937& rng, int max_tokens, double p_end) {
    Matcher m(c);
    Drawn d;
    std::vector<uint32_t> mask(c->vocabulary().words());
    std::vector<int32_t> allowed;
    for (int i = 0; i < max_tokens; ++i) {
        if (m.finished() || (m.can_end() && std::uniform_real_distribution<double>(0, 1)(rng) < p_end)) {
            d.ended = true;
            return d;
        }
        m.fill_mask(mask);
        allowed.clear();
        for (size_t w = 0; w < mask.size(); ++w)
            for (uint32_t b = mask[w]; b; b &= b - 1)
                allowed.push_back(static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(b))));
        if (allowed.empty()) {
            d.ended = m.can_end();
            return d;
        }
        const int32_t t = allowed[std::uniform_int_distribution<size_t>(0, allowed.size() - 1)(rng)];
        if (!m.accept_token(t)) throw std::runtime_error("the matcher refused a token its own mask allowed: " + std::to_string(t));
        d.tokens.push_back(t);
        d.text += c->vocabulary().bytes(t);
    }
    d.ended = m.can_end();
    return d;
}

}  // namespace gtest
