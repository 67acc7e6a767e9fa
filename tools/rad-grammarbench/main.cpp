// rad-grammarbench [--tokenizer DIR] [--schema FILE | --json-object] [--texts N] [--seed S]
//
// Structured output's costs on one core: building the vocabulary's trie, compiling a typical
// tool-call schema (the automaton, then every state's token tables), and the mask of every token
// of N texts drawn through the matcher (each next token picked at random among the allowed ones,
// ending where allowed with probability 1/4): mean, p50, p99 and max of fill_mask, and the mean
// of accept_token. The default tokenizer is Qwen3's (152k ids). --json-object measures JSON object
// mode instead (a recursive grammar: masks of nested values need the stack).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "radiance/grammar/matcher.h"
#include "radiance/grammar/sources.h"
#include "radiance/grammar/vocabulary.h"
#include "radiance/text/tokenizer.h"

using namespace radiance;
using Clock = std::chrono::steady_clock;

namespace {

const char* kToolSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "enum": ["get_weather", "search_flights", "book_hotel"]},
    "arguments": {
      "type": "object",
      "properties": {
        "location": {"type": "string", "description": "City and country, e.g. Paris, France"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 14},
        "include_hourly": {"type": "boolean"},
        "notes": {"type": ["string", "null"]}
      },
      "required": ["location", "unit"],
      "additionalProperties": false
    }
  },
  "required": ["name", "arguments"],
  "additionalProperties": false
})";

double us(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

}  // namespace

int main(int argc, char** argv) {
    std::string dir = std::string(RAD_SHARED_DIR) + "/tokenizers/qwen3", schema_path;
    int texts = 200;
    unsigned seed = 1;
    bool json_object = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::cerr << a << " needs a value\n";
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--tokenizer")
            dir = value();
        else if (a == "--schema")
            schema_path = value();
        else if (a == "--texts")
            texts = std::stoi(value());
        else if (a == "--json-object")
            json_object = true;
        else if (a == "--seed")
            seed = static_cast<unsigned>(std::stoul(value()));
        else {
            std::cerr << "usage: rad-grammarbench [--tokenizer DIR] [--schema FILE | --json-object] [--texts N] [--seed S]\n";
            return 2;
        }
    }
    std::string schema_text = kToolSchema;
    if (!schema_path.empty()) {
        std::ifstream f(schema_path);
        std::stringstream ss;
        ss << f.rdbuf();
        schema_text = ss.str();
    }
    try {
        const auto tok = text::Tokenizer::from_file(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
        auto t0 = Clock::now();
        const auto vocab = grammar::Vocabulary::from_tokenizer(tok, static_cast<int64_t>(tok.vocab_size()));
        const double vocab_ms = us(Clock::now() - t0) / 1000;
        const auto schema = nlohmann::ordered_json::parse(schema_text);
        // compile: the median of 7 runs (no cache: each compiles from the schema)
        std::vector<double> compile_ms;
        std::shared_ptr<const grammar::CompiledGrammar> c;
        grammar::CompiledStats stats;
        for (int k = 0; k < 7; ++k) {
            t0 = Clock::now();
            c = grammar::CompiledGrammar::compile(json_object ? grammar::json_object_grammar() : grammar::json_schema_grammar(schema),
                                                  vocab);
            compile_ms.push_back(us(Clock::now() - t0) / 1000);
            stats = c->stats();
        }
        std::sort(compile_ms.begin(), compile_ms.end());
        std::vector<double> mask_us;
        double accept_total = 0;
        size_t accepts = 0, ended = 0, chars = 0;
        std::mt19937 rng(seed);
        std::vector<uint32_t> mask(vocab->words());
        std::vector<int32_t> allowed;
        for (int n = 0; n < texts; ++n) {
            grammar::Matcher m(c);
            for (int i = 0; i < 512; ++i) {
                if (m.finished() || (m.can_end() && rng() % 4 == 0)) {
                    ++ended;
                    break;
                }
                t0 = Clock::now();
                m.fill_mask(mask);
                mask_us.push_back(us(Clock::now() - t0));
                allowed.clear();
                for (size_t w = 0; w < mask.size(); ++w)
                    for (uint32_t b = mask[w]; b; b &= b - 1)
                        allowed.push_back(static_cast<int32_t>(w * 32 + static_cast<size_t>(__builtin_ctz(b))));
                if (allowed.empty()) break;
                const int32_t id = allowed[rng() % allowed.size()];
                t0 = Clock::now();
                if (!m.accept_token(id)) {
                    std::cerr << "the matcher refused a token its mask allowed\n";
                    return 1;
                }
                accept_total += us(Clock::now() - t0);
                ++accepts;
                chars += vocab->bytes(id).size();
            }
        }
        std::vector<double> sorted = mask_us;
        std::sort(sorted.begin(), sorted.end());
        auto pct = [&](double p) {
            return sorted.empty() ? 0.0 : sorted[std::min(sorted.size() - 1, static_cast<size_t>(p * sorted.size()))];
        };
        double mean = 0;
        for (double v : mask_us) mean += v;
        mean /= std::max<size_t>(mask_us.size(), 1);
        std::printf("vocabulary: %lld ids (%zu usable), trie %zu nodes, built in %.1f ms\n", static_cast<long long>(vocab->size()),
                    vocab->usable_count(), vocab->byte.size(), vocab_ms);
        std::printf("compile: %.2f ms median of 7 (automaton %.2f ms, token tables %.2f ms; %zu states, %zu rules)\n",
                    compile_ms[compile_ms.size() / 2], stats.automaton_ms, stats.tokens_ms, stats.states, stats.rules);
        std::printf("mask: %zu tokens over %d texts (%zu ended, %zu bytes): mean %.2f us, p50 %.2f us, p99 %.2f us, max %.1f us\n",
                    mask_us.size(), texts, ended, chars, mean, pct(0.5), pct(0.99), sorted.empty() ? 0.0 : sorted.back());
        std::printf("accept_token: mean %.2f us\n", accepts ? accept_total / static_cast<double>(accepts) : 0.0);
    } catch (const std::exception& e) {
        std::cerr << "rad-grammarbench: " << e.what() << "\n";
        return 1;
    }
    return 0;
}
