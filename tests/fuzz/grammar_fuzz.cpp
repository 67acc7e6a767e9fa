// libFuzzer target: structured output's parsers and compiler on arbitrary input. The first byte
// picks the source (GBNF, a regular expression, a JSON Schema, a choice list), the rest is its
// text; what compiles (for a vocabulary of the 256 bytes) is then driven for a few tokens through
// the matcher's masks. Bad input must end in GrammarError (or a JSON parse error), never a crash,
// a sanitizer report, a leak or a slow input (scripts/test.sh runs it with -timeout=10).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "radiance/grammar/matcher.h"
#include "radiance/grammar/sources.h"
#include "radiance/grammar/vocabulary.h"

using namespace radiance::grammar;

namespace {

std::shared_ptr<const Vocabulary> bytes_vocab() {
    static const auto v = [] {
        std::vector<std::string> b(256);
        for (int i = 0; i < 256; ++i) b[i] = std::string(1, static_cast<char>(i));
        return Vocabulary::build(b, std::vector<uint8_t>(256, 1), 258);
    }();
    return v;
}

// The API refuses bodies nested deeper than 64 before anything parses them (json_io.h).
bool too_deep(const std::string& s) {
    int depth = 0;
    for (char c : s) {
        if (c == '[' || c == '{') ++depth;
        if (c == ']' || c == '}') --depth;
        if (depth > 64) return true;
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        Grammar g;
        switch (data[0] % 4) {
        case 0: g = gbnf_grammar(text); break;
        case 1: g = regex_grammar(text); break;
        case 2: {
            if (too_deep(text)) return 0;
            auto schema = nlohmann::ordered_json::parse(text, nullptr, false);
            if (schema.is_discarded()) return 0;
            g = json_schema_grammar(schema);
            break;
        }
        default: {
            std::vector<std::string> choices;
            size_t at = 0;
            while (at <= text.size() && choices.size() < 64) {
                const size_t nl = text.find('\n', at);
                choices.push_back(text.substr(at, nl == std::string::npos ? std::string::npos : nl - at));
                if (nl == std::string::npos) break;
                at = nl + 1;
            }
            g = choice_grammar(choices);
        }
        }
        (void)to_gbnf(g);
        auto c = CompiledGrammar::compile(g, bytes_vocab());
        Matcher m(c);
        std::vector<uint32_t> mask(c->vocabulary().words());
        for (int i = 0; i < 16 && !m.finished(); ++i) {
            m.fill_mask(mask);
            int32_t pick = -1;
            for (size_t w = 0; w < mask.size() && pick < 0; ++w)
                if (mask[w]) pick = static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(mask[w] >> (i % 2 ? 0 : 0))));
            if (pick < 0) break;
            if (!m.accept_token(pick)) __builtin_trap();  // a token the mask allowed must be accepted
        }
    } catch (const GrammarError&) {
    } catch (const nlohmann::json::exception&) {
    }
    return 0;
}
