// grammar_test_util.h: helpers for the structured-output tests.
#pragma once
#include <memory>
#include <random>
#include <string>
#include <string_view>

#include "radiance/grammar/grammar.h"
#include "radiance/grammar/matcher.h"
#include "radiance/grammar/sources.h"
#include "radiance/grammar/vocabulary.h"
#include "radiance/text/tokenizer.h"

namespace gtest {

using namespace radiance::grammar;

// The 256 single bytes as a vocabulary (id b = byte b): a grammar's language checked byte by byte.
std::shared_ptr<const Vocabulary> byte_vocab();
std::shared_ptr<const CompiledGrammar> compile_bytes(const Grammar& g);
// Whether the whole text matches (every byte accepted, and the match may end there).
bool matches(const std::shared_ptr<const CompiledGrammar>& c, std::string_view text);

// A real tokenizer from shared/tokenizers (qwen3, llama3, mistral, gpt2) and its vocabulary (cached).
const radiance::text::Tokenizer& tokenizer(const std::string& name);
std::shared_ptr<const Vocabulary> vocab(const std::string& name);

// Random text the grammar accepts, drawn token by token from the matcher's masks over `c`'s
// vocabulary (each allowed token equally likely; ending, where allowed, with probability
// p_end): the bytes, and whether it ended inside max_tokens.
struct Drawn {
    std::string text;
    std::vector<int32_t> tokens;
    bool ended = false;
};
Drawn draw(const std::shared_ptr<const CompiledGrammar>& c, std::mt19937& rng, int max_tokens = 400, double p_end = 0.3);

}  // namespace gtest
